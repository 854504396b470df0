"""``-:`` given to getopts: dash 0.5.12, with an OPTSTRING that starts with ``:``, takes the ':' as an option
letter, one that takes an argument only when the OPTSTRING's next character is also ':'."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("optstring", "placed"), [
    (":a:", "/dest/:--2.py"),   # dash: name ':', OPTARG empty, OPTIND 2
    ("::", "/dest/:-x-3.py"),   # dash: name ':', OPTARG x, OPTIND 3
])
def test_dash_reads_a_colon_option_as_the_optstring_head_says(optstring: str, placed: str) -> None:
    plan = run_script(f'set -- -: x\ngetopts "{optstring}" opt\ncp x.py "/dest/$opt-$OPTARG-$OPTIND.py"\n',
                      "dash i.sh")
    assert in_dest(plan) == [placed]
