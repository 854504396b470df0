"""``readonly NAME`` (``declare -r``): a later assignment or ``unset`` of NAME is an error, and NAME keeps its value.

dash ends the script on it, whatever ``||`` or ``if`` say (a special
builtin's error), except in ``read``, which only fails. bash fails the
command (``export``, ``unset``, ``local``, ``read``, ``for``) and goes on;
an assignment alone makes it drop the rest of the script's line, as
failglob does, and under ``set -e`` end the script. A subshell's
``readonly`` ends with it. Each answer was checked with bash 5.2 and dash
0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script


@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("readonly D=/dest\nD=/tmp\ncp x.py $D/\n", ["/dest/x.py"], []),
    ("readonly D=/dest\nD=/tmp; cp x.py $D/a.py\ncp x.py $D/b.py\n", ["/dest/b.py"], []),  # the line is dropped
    ("readonly D=/dest\nD=/tmp || cp x.py $D/or.py\ncp x.py $D/next.py\n", ["/dest/next.py"], []),
    ("readonly D=/dest\nf() { D=/tmp; cp x.py $D/f.py; }\nf; cp x.py $D/same.py\ncp x.py $D/next.py\n",
     ["/dest/next.py"], []),
    ("set -e\nreadonly D=/dest\nD=/tmp\ncp x.py $D/next.py\n", [], []),
    ("readonly D=/dest\nexport D=/tmp\ncp x.py $D/\n", ["/dest/x.py"], []),
    ("readonly D=/dest\nunset D\ncp x.py ${D:-/tmp}/\n", ["/dest/x.py"], []),
    ("readonly D=/dest\nfor D in /tmp; do cp x.py $D/l.py; done\ncp x.py $D/\n", ["/dest/x.py"], []),
    ("readonly D=/dest\nf() { local D=/tmp; cp x.py $D/f.py; }\nf\ncp x.py $D/\n", ["/dest/f.py", "/dest/x.py"], []),
    ("readonly D=/dest\nreadonly D=/tmp\ncp x.py $D/\n", ["/dest/x.py"], []),
    ("D=/dest\nreadonly D\nD=/tmp\ncp x.py $D/\n", ["/dest/x.py"], []),
    ("readonly D=/dest E=/dest\ncp x.py $E/e.py\nE=/tmp\ncp x.py $D/\n", ["/dest/e.py", "/dest/x.py"], ["/dest/e.py"]),
    ("readonly D=/dest\nread D <<EOF\n/tmp\nEOF\ncp x.py $D/\n", ["/dest/x.py"], ["/dest/x.py"]),  # read only fails
    ("(readonly D=/tmp)\nD=/dest\ncp x.py $D/\n", ["/dest/x.py"], ["/dest/x.py"]),
    ("readonly D=/dest\n(D=/tmp; cp x.py $D/s.py)\ncp x.py $D/m.py\n", ["/dest/m.py"], ["/dest/m.py"]),
])
def test_a_read_only_variable_keeps_its_value(script: str, bash: list[str], dash: list[str]) -> None:
    assert in_dest(run_script(script, "bash i.sh")) == bash
    assert in_dest(run_script(script, "dash i.sh")) == dash


@pytest.mark.parametrize("declare", ["declare", "typeset"])
def test_declare_r_makes_a_variable_read_only(declare: str) -> None:
    # bash 5.2: typeset is declare's other name; 'D=/tmp' fails ("D: readonly variable") and D stays /dest.
    assert in_dest(run_script(f"{declare} -r D=/dest\nD=/tmp\ncp x.py $D/\n")) == ["/dest/x.py"]


def test_the_failed_assignment_is_noted_where_it_stands() -> None:
    plan = run_script("readonly D=/dest\nD=/tmp\ncp x.py $D/\n", "dash i.sh")
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("fails", 2, "D is read-only: sh ends here")]
    plan = run_script("readonly D=/dest\nD=/tmp\ncp x.py $D/\n", "bash i.sh")
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("fails", 2, "D is read-only: bash drops the rest of the line")]


def test_failglob_drops_the_rest_of_the_line_too() -> None:
    script = "shopt -s failglob\ncp *.nomatch /dest/; cp x.py /dest/same.py\ncp x.py /dest/next.py\n"
    assert in_dest(run_script(script)) == ["/dest/next.py"]


def test_bash_local_r_is_read_only_until_the_function_returns() -> None:
    # bash 5.2: 'X=2' fails ("readonly variable") and ends the function's body; after it, X is free again.
    script = "f() {\n  local -r X=1\n  X=2\n  cp x.py /dest/in$X.py\n}\nf\nX=3\ncp x.py /dest/out$X.py\n"
    plan = run_script(script, "bash i.sh")
    assert in_dest(plan) == ["/dest/out3.py"]
    plan = run_script(script.replace("  X=2\n", ""), "bash i.sh")
    assert in_dest(plan) == ["/dest/in1.py", "/dest/out3.py"]


def test_dash_local_takes_no_options_and_ends_the_script() -> None:
    # dash 0.5.12: "local: -r: bad variable name", an error of a special builtin: the script ends (status 2).
    plan = run_script("f() { local -r X=1; cp x.py /dest/in.py; }\nf\ncp x.py /dest/after.py\n", "dash i.sh")
    assert in_dest(plan) == []
    assert [(n.kind, n.line, n.reason) for n in plan.notes][0] == (
        "fails", 1, "dash's local takes no options: '-r' is a bad variable name, and the script ends there")


def test_dash_ends_the_script_with_status_2_at_local_with_an_option() -> None:
    # dash 0.5.12 prints "local: -r: bad variable name" and exits 2, as for any special builtin's error.
    plan = run_script("f() { local -r X=1; cp x.py /dest/in.py; }\nf\ncp x.py /dest/after.py\n",
                      "dash i.sh; [ $? = 2 ] && cp x.py /dest/two.py")
    assert in_dest(plan) == ["/dest/two.py"]


def test_under_sh_local_with_an_option_depends_on_the_image() -> None:
    plan = run_script("f() { local -r X=1; cp x.py /dest/in$X.py; }\nf\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/in1.py"] and [n.kind for n in plan.notes] == ["assumed"]


# A read-only name cannot take an array from read -a or mapfile: the command fails and the script reads on
# (checked under bash 5.2.15).
@pytest.mark.parametrize(("command", "reason"), [
    ('read -a arr <<< "a b"', "arr is read-only: read fails"),
    ('mapfile arr <<< "a b"', "arr is read-only: the command fails"),
])
def test_a_read_only_name_takes_no_array_and_the_command_fails(command: str, reason: str) -> None:
    plan = run_script(f"readonly arr\n{command} || cp x.py /dest/failed\ncp x.py /dest/after\n")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]
    assert notes(plan) == [("fails", 2, command, reason)]
