"""Whether ``set -e`` holds inside ``$(...)``: sh keeps it, bash clears it unless told otherwise.

dash (and bash as sh, in POSIX mode) runs a command substitution with the
shell's options: ``V=$(false; echo hi)`` ends there, the assignment takes
its status and a ``set -e`` script ends. bash outside POSIX mode clears
``-e`` in the substitution, so the same line gives ``V=hi`` and the script
goes on, unless ``shopt -s inherit_errexit``, ``set -o posix`` or
``bash --posix`` says otherwise. A process substitution ``<(...)`` keeps
``-e`` in bash too. Each answer was checked with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

SCRIPT = "set -e\nV=$(false; echo hi)\ncp x.py /dest/$V.py\n"


@pytest.mark.parametrize(("prefix", "run", "placed"), [
    ("", "bash i.sh", ["/dest/hi.py"]),
    ("", "dash i.sh", []),
    ("", "sh i.sh", []),  # dash, or bash as sh (POSIX mode): -e holds either way
    ("shopt -s inherit_errexit\n", "bash i.sh", []),
    ("set -o posix\n", "bash i.sh", []),
    ("", "bash --posix i.sh", []),
    ("", "bash -o posix i.sh", []),
])
def test_set_e_inside_a_command_substitution_follows_the_shell(prefix: str, run: str, placed: list[str]) -> None:
    assert in_dest(run_script(prefix + SCRIPT, run)) == placed


@pytest.mark.parametrize(("script", "placed"), [
    # A subshell or function inside the substitution has its (cleared) option.
    ("set -e\nV=$( (false; echo hi) )\ncp x.py /dest/$V.py\n", ["/dest/hi.py"]),
    ("set -e\nf() { false; echo in; }\nV=$(f)\ncp x.py /dest/$V.py\n", ["/dest/in.py"]),
    # set -e written inside the substitution holds there.
    ("set -e\nV=$(set -e; false; echo hi)\ncp x.py /dest/$V.py\n", []),
    # The substitution's own status still counts when its last command fails.
    ("set -e\nV=$(echo hi; false)\ncp x.py /dest/$V.py\n", []),
    # A process substitution keeps -e: nothing is read, nothing copied, the script goes on.
    ("set -e\nwhile read l; do cp x.py /dest/$l.py; done < <(false; echo hi)\ncp x.py /dest/end.py\n",
     ["/dest/end.py"]),
])
def test_bash_clears_set_e_in_command_substitution_only(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


def test_an_assignment_takes_status_1_from_a_substitution_that_failglob_ends() -> None:
    # bash 5.2: "no match: *.nomatch" ends the $(...), and 'V=$(...)' alone then leaves $? at 1.
    plan = run_script("shopt -s failglob\nV=$(echo *.nomatch)\ncp x.py /dest/$?.py\n")
    assert in_dest(plan) == ["/dest/1.py"]
