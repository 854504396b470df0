"""``xargs`` builds its commands from the input the reader knows, as GNU xargs 4.9 splits it.

``grep -v '^#' files.txt | xargs -I{} cp {} DEST`` installs what a list in
the context names. Where the reader knows the input, the commands xargs
builds run (blanks, newlines, quotes and backslashes split it; ``-I``
takes lines, ``-0`` NULs, ``-d`` one character; ``-n`` groups; empty input
still runs the command once unless ``-r``). Where it does not, a copy with
a fixed destination is unread there, and a program that changes the files
it is given could change any. Each row was run under bash 5.2 and dash
0.5.12 with the same outcome.
"""

from __future__ import annotations

import pytest

from patcher.shipping.xargs_program import commands, read_xargs, split_input
from tests.shipping.conftest import in_dest, notes_of, run_script

LIST = {"s/list.txt": "# files\nx.py\n\nsub/y.py\n"}


@pytest.mark.parametrize(("script", "placed"), [
    ("cat list.txt | grep -v '^#' | xargs -I{} cp {} /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("grep -v '^#' list.txt | xargs cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("grep -v '^#' list.txt | xargs -n1 -I F cp F /dest/\n", ["/dest/x.py", "/dest/y.py"]),
    ("echo 'x.py sub/y.py' | xargs cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("printf 'x.py,sub/y.py' | xargs -d , cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("find sub -name '*.py' | xargs cp -t /dest\n", ["/dest/y.py"]),
    ("printf '' | xargs rm\ncp x.py /dest/after.py\n", ["/dest/after.py"]),  # rm with no operand fails, no more
    ("echo \"'x.py\" | xargs cp -t /dest || cp x.py /dest/quote.py\n", ["/dest/quote.py"]),  # unmatched quote
    ("echo nothere.py | xargs cp -t /dest || cp x.py /dest/failed.py\n", ["/dest/failed.py"]),  # status 123
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_commands_xargs_builds_from_known_input_run(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run, files=LIST)
    assert in_dest(plan) == placed
    assert not [n for n in plan.notes if n.kind in ("unread", "program")]


@pytest.mark.parametrize(("text", "options", "items"), [
    ("a b\n c\n", [], ["a", "b", "c"]),
    ("'a b' \"c d\" e\\ f\n", [], ["a b", "c d", "e f"]),
    ("  a b  \n\nc\n", ["-I", "{}"], ["a b  ", "c"]),  # -I: a line, its leading blanks gone
    ("a\0b c\0", ["-0"], ["a", "b c"]),
    ("a,b\n,c", ["-d", ","], ["a", "b\n", "c"]),
    ("a\n", ["-d", "\\n"], ["a"]),
])
def test_xargs_splits_its_input_as_gnu_xargs(text: str, options: list[str], items: list[str]) -> None:
    line = read_xargs([*options, "echo"])
    assert not isinstance(line, str)
    assert split_input(line, text) == items


@pytest.mark.parametrize(("options", "items", "built"), [
    ([], [], [["rm"]]),  # empty input runs the command once
    (["-r"], [], []),
    (["-n", "2"], ["a", "b", "c"], [["rm", "a", "b"], ["rm", "c"]]),
    (["-I", "X"], ["a", "b"], [["rm", "a"], ["rm", "b"]]),
])
def test_xargs_builds_one_command_per_group_or_line(options: list[str], items: list[str],
                                                     built: list[list[str]]) -> None:
    line = read_xargs([*options, "rm", *(["X"] if "-I" in options else [])])
    assert not isinstance(line, str)
    assert commands(line, items) == built


@pytest.mark.parametrize(("line", "kind", "scope"), [
    ("ls sub/*.py | xargs -I{} cp {} /dest/", "unread", ("/dest",)),  # a copy to a fixed place
    ("ls sub/*.py | xargs cp -t /dest", "unread", ("/dest",)),
    ("ls sub/*.py | xargs rm -f", "program", None),  # what it removes is what ls printed
    ("ls sub/*.py | xargs -I{} cp {} /dest/{}", "program", None),
    ("ls | xargs -P4 rm", "program", None),  # an option the reader does not follow
])
def test_xargs_on_unknown_input_says_what_it_could_change(line: str, kind: str,
                                                            scope: tuple[str, ...] | None) -> None:
    plan = run_script(line + "\n")
    assert [(n.kind, n.scope) for n in plan.notes] == [(kind, scope)]


def test_xargs_on_unknown_input_running_a_reader_changes_nothing() -> None:
    plan = run_script("ls sub/*.py | xargs grep -l torch\nls | xargs chmod 644\n")
    assert plan.notes == ()


def test_xargs_with_more_input_than_the_reader_runs_is_unread() -> None:
    plan = run_script("cat list.txt | xargs cp -t /dest\n", files={"s/list.txt": "x.py\n" * 10_001})
    assert in_dest(plan) == [] and [(n.kind, n.scope) for n in plan.notes] == [("unread", ("/dest",))]



@pytest.mark.parametrize("xargs", [
    "xargs --no-run-if-empty -I{} cp {} /dest/",
    "xargs --max-args=1 -I{} cp {} /dest/",
])
def test_short_options_after_a_long_one_are_still_options(xargs: str) -> None:
    plan = run_script(f"echo x.py | {xargs}\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert not plan.notes


def test_an_unmatched_quote_in_xargs_input_is_a_noted_failure() -> None:
    plan = run_script("echo \"'x.py\" | xargs cp -t /dest\n")
    assert notes_of(plan, "fails")[0] == ("s/i.sh", 1, "xargs cp -t /dest")
    assert in_dest(plan) == []
