"""bash's arithmetic commands: ``((EXPRESSION))``, ``let EXPRESSION...`` and ``for ((INIT; CONDITION; STEP))``.

``((...))`` makes its assignments (``=``, ``+=``..., ``++``, ``--``, a comma
between expressions) and succeeds when its value is not 0, so ``((i++))``
with i at 0 fails, and ends a ``set -e`` script as it ends bash's. A value the
reader cannot know makes the status unknown and a loop's body is read once.
For dash (the base image's ``sh`` may be dash) ``((`` is two subshells.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script as read




# Each row's files are those bash 5.2 placed for the same script.
@pytest.mark.parametrize(("script", "files"), [
    ("set -e; i=0; ((i++)); cp x.py /dest/after.py", []),  # i++ gives 0: the command fails
    ("set -e; i=0; ((++i)); cp x.py /dest/after$i.py", ["/dest/after1.py"]),
    ("for ((i=0; i<3; i++)); do cp x.py /dest/x$i.py; done", ["/dest/x0.py", "/dest/x1.py", "/dest/x2.py"]),
    ("for ((i=0; i<2; i++))\ndo\n  cp x.py /dest/l$i.py\ndone", ["/dest/l0.py", "/dest/l1.py"]),
    ("((N = 1 + 1)); cp x.py /dest/n$N.py", ["/dest/n2.py"]),
    ("set -- a; (( $# > 0 )) && cp x.py /dest/args.py", ["/dest/args.py"]),
    ("(( 2 < 1 )) || cp x.py /dest/not.py", ["/dest/not.py"]),
    ("(( 1 && 0 )) || cp x.py /dest/and.py; (( 0 || 2 )) && cp x.py /dest/or.py", ["/dest/and.py", "/dest/or.py"]),
    ("for ((;;)); do cp x.py /dest/once.py; break; done", ["/dest/once.py"]),
    ("i=5; ((i+=2, j=i*2)); cp x.py /dest/$i-$j.py", ["/dest/7-14.py"]),
    # let: each argument an expression as in ((...)), the last one's value the status.
    ("set -e; let 'x = 0'; cp x.py /dest/after.py", []),
    ("let x=4 y=x+1; cp x.py /dest/$x-$y.py", ["/dest/4-5.py"]),
    ("let 'x = 2' 'x *= 3'; cp x.py /dest/$x.py; let x--; cp x.py /dest/s$?.py", ["/dest/6.py", "/dest/s0.py"]),
    ("let x=1 'y = 0'; cp x.py /dest/s$?.py", ["/dest/s1.py"]),
    ("let; cp x.py /dest/s$?.py", ["/dest/s1.py"]),  # "expression expected"
    ("i=0; while let 'i < 2'; do cp x.py /dest/i$i.py; let i++; done", ["/dest/i0.py", "/dest/i1.py"]),
    ("V=7; let \"w = $V * 2\"; cp x.py /dest/w$w.py", ["/dest/w14.py"]),
    ("n=3; while ((n > 0)); do ((n--)); cp x.py /dest/w$n.py; done", ["/dest/w0.py", "/dest/w1.py", "/dest/w2.py"]),
    ("((cd sub && cp y.py /dest/) ); cp x.py /dest/after.py", ["/dest/after.py", "/dest/y.py"]),  # two subshells
])
def test_an_arithmetic_command_runs_as_bash_runs_it(script: str, files: list[str]) -> None:
    plan = read(script + "\n")
    assert placed(plan) == files
    assert not [n for n in plan.notes if n.kind in ("unread", "stop")]


def test_a_loop_whose_condition_the_reader_cannot_know_is_read_once() -> None:
    plan = read("for ((i=0; i<$(nproc); i++)); do cp x.py /dest/x$i.py; done\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/after.py", "/dest/x0.py"]


@pytest.mark.parametrize("command", ["((n = $(nproc) * 2))", "n=$(nproc); ((n++))", "n=$(nproc); ((--n))",
                                     "n=$(nproc); let n++"])
def test_an_arithmetic_command_with_an_unknown_value_leaves_its_variable_unknown(command: str) -> None:
    plan = read(command + " || true\ncp x.py /dest/n$n.py\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


def test_an_endless_arithmetic_loop_is_read_to_its_limit() -> None:
    plan = read("for ((;;)); do :; done\ncp x.py /dest/after.py\n")
    assert placed(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("stop", 1)]


def test_the_note_on_an_endless_arithmetic_loop_after_other_commands_shows_the_loop_alone() -> None:
    # bash 5.2 never leaves this loop: the note names the loop as written, not the lines before it.
    plan = read("cp x.py /dest/before.py\nfor ((;;)); do :; done\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/before.py"]
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("stop", 2, "for ((;;)); do :; done")]


def test_an_arithmetic_loop_without_its_three_expressions_is_a_syntax_error_at_its_line() -> None:
    # The step forgotten: bash 5.2 says "arithmetic expression required" on line 2 and runs only line 1.
    plan = read("cp x.py /dest/before.py\nfor ((i=0; i<3)); do cp x.py /dest/x$i.py; done\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/before.py"]
    assert [(n.kind, n.file, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("stop", "s/i.sh", 2, "cannot be parsed as shell ('for ((' needs three expressions): s/i.sh is not read "
                              "from here on")]


def test_under_dash_double_parentheses_are_two_subshells() -> None:
    plan = read("((cd sub && cp y.py /dest/))\n", run="dash i.sh")
    assert placed(plan) == ["/dest/y.py"]


@pytest.mark.parametrize(("script", "files"), [
    ("set -- a; (( $# > 5 )) || cp x.py /dest/no.py; (( $# > 5 )) && cp x.py /dest/yes.py; true", ["/dest/no.py"]),
    ("set -- a b c; for ((i=0; i<$#; i++)); do cp x.py /dest/i$i.py; done",
     ["/dest/i0.py", "/dest/i1.py", "/dest/i2.py"]),
    ("set -- 4; (( y = $1 + 1 )); cp x.py /dest/y$y.py", ["/dest/y5.py"]),
    ("x=5; ((x = 1, y = $x)); cp x.py /dest/$x-$y.py", ["/dest/1-5.py"]),  # $x is expanded before x = 1 runs
])
def test_special_parameters_expand_inside_an_arithmetic_command(script: str, files: list[str]) -> None:
    # bash 5.2 places these files: ((...)) expands $#, $1, $x in its text first, then evaluates it.
    plan = read(script + "\n")
    assert placed(plan) == files and not plan.notes
