"""What bash's ``>(...)`` prints goes where the shell around it prints: a ``$(...)`` around the command hears it.

``v=$(true > >(echo a))`` sets v to a in bash 5.2: the process substitution
inherits the command substitution's pipe as its standard output, and
``$(...)`` reads until every writer has closed it.
"""

from __future__ import annotations

from tests.shipping.conftest import in_dest, run_script


def test_what_an_output_process_substitution_prints_is_heard_by_the_command_substitution_around_it() -> None:
    plan = run_script('v=$(true > >(echo a))\ncp x.py "/dest/$v.py"\n', "bash i.sh")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()
