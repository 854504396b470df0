"""Statuses the readers take from conditions, pipe parts and ``$(...)``, as bash 5.2 and dash 0.5.12 give them.

A pipe's last part is a subshell: an EXIT trap it sets runs when that part
ends, and the trap's ``exit N`` is the part's status (so the pipe's). An
``if`` whose condition is ``false && CMD`` does not run CMD and takes the
``else`` (a ``cd`` the reader cannot work out, in a condition: test_directory_stack). A ``[[ =~ ]]``
whose regular expression Python cannot compile (glibc's ``a**``) is left
to the image, both branches followed. A ``$(...)`` in which the reader
stops (``cd`` into a folder that is not there) stops only that
substitution: the script reads on, and what it prints is unknown. In the
branch for 'no' of an ``if`` the image decides, ``$?`` is the condition's
failure. A ``[`` without its closing ``]`` fails (status 2), whatever it tests. Each expected result was checked by
running the script under bash 5.2.15 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script

BOTH_WAYS = "the base image decides whether this holds: the reader follows the branch for 'yes', then the one for 'no'"


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_an_exit_trap_of_a_pipes_last_part_gives_the_pipe_its_status(run: str) -> None:
    plan = run_script('true | { trap "exit 0" EXIT; false; } && cp x.py /dest/ok\n'
                      'true | { trap "exit 4" EXIT; true; } || cp x.py /dest/failed\n', run=run)
    assert in_dest(plan) == ["/dest/failed", "/dest/ok"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_number_of_a_pipe_parts_exit_trap_is_the_pipes(run: str) -> None:
    plan = run_script('true | { trap "exit 3" EXIT; true; }\ncp x.py "/dest/st$?"\n', run=run)
    assert in_dest(plan) == ["/dest/st3"]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_pipe_parts_exit_trap_that_does_not_exit_keeps_its_status_and_a_bare_exit_repeats_it(run: str) -> None:
    plan = run_script('true | { trap "false" EXIT; true; }\ncp x.py "/dest/a$?"\n'
                      'true | { trap "exit" EXIT; (exit 5); }\ncp x.py "/dest/b$?"\n', run=run)
    assert in_dest(plan) == ["/dest/a0", "/dest/b5"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_failed_left_side_of_and_in_an_if_condition_takes_the_else(run: str) -> None:
    plan = run_script("if false && cp x.py /dest/no; then cp x.py /dest/then; else cp x.py /dest/else; fi\n"
                      "if true || cp x.py /dest/no2; then cp x.py /dest/then2; fi\n", run=run)
    assert in_dest(plan) == ["/dest/else", "/dest/then2"]
    assert notes(plan) == []


def test_a_regex_python_cannot_compile_is_left_to_the_image() -> None:
    # glibc takes 'a**' as 'a*': bash matches, so only /dest/yes lands in the real build.
    plan = run_script("if [[ aaa =~ a** ]]; then cp x.py /dest/yes; else cp x.py /dest/no; fi\n")
    assert in_dest(plan) == ["/dest/no", "/dest/yes"]
    assert notes(plan) == [("assumed", 1, "[[ aaa =~ a** ]]", BOTH_WAYS)]


def test_a_stop_inside_a_substitution_ends_that_substitution_only() -> None:
    # bash and dash: cd fails, pwd prints /w/s, and every copy after it runs.
    plan = run_script('V=$(cd none; pwd)\nmkdir -p "/dest$V"\ncp x.py "/dest$V/"\ncp x.py /dest/after\n')
    assert "/dest/after" in in_dest(plan)
    # What the $(...) prints past the stop is unknown: $V, and the paths made of it, are.
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [
        ("stop", 1, "cd none"), ("unread", 2, 'mkdir -p "/dest$V"'), ("unread", 3, 'cp x.py "/dest$V/"')]
    assert plan.notes[0].reason.startswith("cd into /w/s/none, which is not a folder at this point of the build")


def test_what_a_substitution_prints_after_the_reader_stopped_in_it_is_unknown() -> None:
    plan = run_script('V=$(cd none; pwd)\nmkdir -p "/dest$V"\ncp x.py "/dest$V/"\n')
    assert "/dest/x.py" not in in_dest(plan)


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_status_in_the_else_of_an_undecided_if_is_the_conditions(run: str) -> None:
    plan = run_script('if [ -e /etc/foo ]; then cp x.py /dest/yes; else cp x.py "/dest/no-$?"; fi\n', run=run)
    assert "/dest/no-0" not in in_dest(plan)


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_status_in_the_branches_of_an_undecided_if(run: str) -> None:
    plan = run_script('if [ -e /etc/foo ]; then cp x.py "/dest/yes-$?"; else cp x.py "/dest/no-$?"; fi\n', run=run)
    assert in_dest(plan) == ["/dest/no-1", "/dest/yes-0"]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize(("script", "placed"), [
    # bash 5.2, dash 0.5.12 and coreutils' [: "missing ']'", status 2; the branch never runs.
    ("if [ -f x.py; then cp x.py /dest/a.py; fi\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"]),
    ("[ -n x || cp x.py /dest/s$?.py\n", ["/dest/s2.py"]),
    ("[ || cp x.py /dest/s$?.py\n", ["/dest/s2.py"]),
    ("[ ] || cp x.py /dest/s$?.py\n", ["/dest/s1.py"]),  # closed, and empty: false
])
def test_a_bracket_without_its_closing_bracket_fails(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed
