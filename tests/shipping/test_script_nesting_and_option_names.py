"""A script run by ``bash FILE`` that nests too deeply to run, and a shell option named by an unknown value.

Pins: a script the parser reads but whose commands nest deeper than the
reader can run (Python's recursion limit) is a ``stop`` noted on the line
that runs it, in the Dockerfile; nothing of it is placed, and its status
(``$?`` after it) is unknown (bash 5.2 and dash 0.5.12 run 160 nested
braces, copy the file and succeed; the reader says it cannot tell).
``bash -o NAME FILE`` with a NAME the reader cannot know is not refused:
the script runs (bash 5.2 with NAME=errexit runs it and copies).
"""

from __future__ import annotations

from tests.shipping.conftest import in_dest, run_script


def _nested(depth: int) -> str:
    return "{ " * depth + "cp x.py /dest/a" + "; }" * depth + "\n"


def test_a_script_nesting_too_deeply_to_run_is_a_stop_at_the_line_that_runs_it() -> None:
    # The parser reads deeper nesting than the reader can run: the first depth the reader cannot follow is one it
    # parsed and could not run (160 or so, under pytest), not one it could not parse.
    for depth in range(64, 400, 8):
        plan = run_script(_nested(depth))
        if plan.notes:
            break
    else:
        raise AssertionError("no depth up to 400 stops the reader")
    assert depth > 64
    assert in_dest(plan) == []
    assert [(n.kind, n.file, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", "Dockerfile", 4, "bash i.sh", "s/i.sh nests too deeply to be read; the reader stops there")]
    # Whether the script succeeded the reader cannot say: $? after it is unknown (bash 5.2: 0).
    plan = run_script(_nested(depth), run="bash i.sh; cp x.py /dest/$?")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason, n.scope) for n in plan.notes][1:] == [
        ("unread", "cp /dest/$?: a path that depends on a value the reader cannot work out", ("/dest",))]


def test_a_shell_option_named_by_an_unknown_value_is_not_refused() -> None:
    plan = run_script('bash -o "$OPT" sub/b.sh\n', files={"s/sub/b.sh": "cp x.py /dest/b\n"})
    assert in_dest(plan) == ["/dest/b"]
    assert plan.notes == ()


def test_a_shell_option_no_shell_has_is_refused_and_runs_nothing() -> None:
    plan = run_script("bash -o nosuch sub/b.sh\n", files={"s/sub/b.sh": "cp x.py /dest/b\n"})
    assert in_dest(plan) == []
    assert [(n.kind, n.reason) for n in plan.notes][:1] == [
        ("fails", "bash -o nosuch: no option of that shell, so it runs nothing (status 2)")]
