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
from tests.shipping.conftest import in_dest, notes, notes_of, run_script

LIST = {"s/list.txt": "# files\nx.py\n\nsub/y.py\n"}


@pytest.mark.parametrize(("script", "placed"), [
    ("cat list.txt | grep -v '^#' | xargs -I{} cp {} /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("grep -v '^#' list.txt | xargs cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("grep -v '^#' list.txt | xargs -n1 -I F cp F /dest/\n", ["/dest/x.py", "/dest/y.py"]),
    ("echo 'x.py sub/y.py' | xargs cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("printf 'x.py,sub/y.py' | xargs -d , cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("find sub -name '*.py' | xargs cp -t /dest\n", ["/dest/y.py"]),
    ("xargs cp -t /dest <<EOF\nx.py\nsub/y.py\nEOF\n", ["/dest/x.py", "/dest/y.py"]),  # a here-document
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
    ("a\tb", ["-d", "\\t"], ["a", "b"]),  # -d's escapes
    ("a\0b", ["-d", "\\0"], ["a", "b"]),
    ("a\\b", ["-d", "\\\\"], ["a", "b"]),
    ("a\rb", ["-d", "\\r"], ["a", "b"]),
    ("a,b,", ["-d", ","], ["a", "b"]),  # one delimiter at the end ends the last item
    ("a,b,,", ["-d", ","], ["a", "b", ""]),
    ("a,,b", ["-d", ","], ["a", "", "b"]),
    ("Xa\n\x1cb\n\u00a0c\n", ["-I", "{}"], ["Xa", "\x1cb", "\u00a0c"]),  # what is not white space stays
    ("aXb\n", [], ["aXb"]),
    ("'' a\n", [], ["", "a"]),  # an empty quoted item
    ("a\n'b'\n", [], ["a", "b"]),
    ("'a' 'b'\n", [], ["a", "b"]),
    ("x.py\\", [], ["x.py"]),  # a backslash that ends the input is dropped
    ("a\\\nb\n", ["-I", "{}"], ["a\nb"]),  # -I: a backslash before the newline joins the lines
    ("\rx\n\v y\n\fz\n", ["-I", "{}"], ["x", "y", "z"]),  # -I: leading white space of any kind goes
])
def test_xargs_splits_its_input_as_gnu_xargs(text: str, options: list[str], items: list[str]) -> None:
    line = read_xargs([*options, "echo"])
    assert not isinstance(line, str)
    assert split_input(line, text) == items


@pytest.mark.parametrize(("text", "items"), [
    ("\\a", ["a"]),
    ("\\a b", ["a", "b"]),
    ("a\\b \\c \\d e\n", ["ab", "c", "d", "e"]),
    ("a\\\nb\n", ["a\nb"]),  # even a newline
])
def test_a_backslash_takes_the_next_character_as_it_is(text: str, items: list[str]) -> None:
    line = read_xargs(["echo"])
    assert not isinstance(line, str)
    assert split_input(line, text) == items


@pytest.mark.parametrize(("options", "items", "built"), [
    ([], [], [["rm"]]),  # empty input runs the command once
    (["-r"], [], []),
    (["-n", "2"], ["a", "b", "c"], [["rm", "a", "b"], ["rm", "c"]]),
    (["-n", "1"], ["a", "b"], [["rm", "a"], ["rm", "b"]]),
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
    ("ls | xargs -P4 rm", "program", None),
    ("ls sub | xargs install -t /dest", "unread", ("/dest",)),
    ("ls sub | xargs ln -t /dest", "unread", ("/dest",)),
    ("ls sub | xargs cp --target-directory=/dest", "unread", ("/dest",)),
    ("ls sub | xargs -I{} cp {} x.py /dest", "unread", ("/dest",)),  # under -I, the last word
    ("ls sub | xargs -I{} cp x.py {} /dest/", "unread", ("/dest",)),
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


# GNU xargs 4.9 (bash 5.2, dash 0.5.12): on "x.py 'y" it runs 'cp -t /dest x.py', then says "xargs: unmatched
# single quote; by default quotes are special to xargs unless you use the -0 option" and ends with status 1;
# 123 where that cp failed (cp: cannot stat 'nope.py').
@pytest.mark.parametrize(("first", "placed"), [("x.py", ["/dest/s1", "/dest/x.py"]), ("nope.py", ["/dest/s123"])])
def test_an_unmatched_quote_after_some_items_is_noted_and_xargs_ends_with_1_or_123(first: str,
                                                                                    placed: list[str]) -> None:
    plan = run_script(f"printf \"{first} 'y\\n\" | xargs cp -t /dest\ncp x.py /dest/s$?\n")
    assert in_dest(plan) == placed
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.text == "xargs cp -t /dest"][-1] == (
        "fails", 1, "xargs finds an unmatched quote in its input: it runs the command for the items before it, "
                    "then fails (status 1, or 123 where one of those commands failed)")


@pytest.mark.parametrize(("line", "kind", "reason"), [
    ("ls | xargs -a list.txt cp -t /dest", "program", "runs xargs with an option the reader does not follow, "
                                                      "which the reader does not follow: it could change any file"),
    ('ls | xargs cp -t "$(date)"', "program", "runs xargs with a command the reader cannot work out, "
                                              "which the reader does not follow: it could change any file"),
    ("ls | xargs rm -f", "program", "runs xargs rm on input the reader does not know, "
                                    "which the reader does not follow: it could change any file"),
    ("echo \"'x.py\" | xargs cp -t /dest", "fails",
     "xargs finds an unmatched quote in its input (status 1) and runs nothing"),
])
def test_what_the_reader_says_of_an_xargs_it_does_not_run(line: str, kind: str, reason: str) -> None:
    plan = run_script(line + "\n")
    assert [(n.file, n.line, n.text, n.kind, n.reason) for n in plan.notes if n.line == 1] == [
        ("s/i.sh", 1, line.partition("| ")[2], kind, reason)]


@pytest.mark.parametrize("text", ["'a", "a \"b\n", "a 'b\n"])
def test_an_unmatched_quote_refuses_the_input(text: str) -> None:
    line = read_xargs(["echo"])
    assert not isinstance(line, str)
    assert split_input(line, text) is None


@pytest.mark.parametrize("text", ["'a\nb'\n", "'\nb'\n", "a \"b\nc\"\n"])
def test_a_quote_does_not_span_lines(text: str) -> None:
    line = read_xargs(["echo"])
    assert not isinstance(line, str)
    assert split_input(line, text) is None


@pytest.mark.parametrize(("xargs", "branches"), [
    ("echo x.py | xargs cp -t /dest", ["/dest/x.py", "/dest/zero.py"]),
    ("echo nothere.py | xargs cp -t /dest", ["/dest/s123.py"]),  # a command that fails: 123
    ("printf 'x.py\\nnothere.py\\n' | xargs -n1 cp -t /dest", ["/dest/s123.py", "/dest/x.py"]),
    ("echo probe.py | xargs python3", ["/dest/other.py", "/dest/s123.py", "/dest/zero.py"]),  # the image decides
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_xargs_ends_with_status_123_when_a_command_it_runs_fails(xargs: str, branches: list[str], run: str) -> None:
    script = (f"{xargs}\ncase $? in 0) cp x.py /dest/zero.py;; 123) cp x.py /dest/s123.py;; "
              "*) cp x.py /dest/other.py;; esac\n")
    probe = "import os, sys\nsys.exit(0 if os.path.exists('/etc/probe') else 1)\n"
    plan = run_script(script, run, files={"s/probe.py": probe})
    assert in_dest(plan) == branches


@pytest.mark.parametrize("xargs", ["xargs cp -t /dest", "xargs -n1 cp -t /dest"])
@pytest.mark.parametrize("count", [1_000, 10_000])
def test_xargs_runs_up_to_ten_thousand_items_in_up_to_a_thousand_commands(xargs: str, count: int) -> None:
    plan = run_script(f"head -n {count} list.txt | {xargs}\n", files={"s/list.txt": "x.py\n" * 10_000})
    unread = count > 1_000 and "-n1" in xargs
    assert in_dest(plan) == ([] if unread else ["/dest/x.py"])
    assert [n.kind for n in plan.notes] == (["unread"] if unread else [])


def test_xargs_refuses_a_group_of_no_arguments() -> None:
    # GNU xargs 4.9: "value 0 for -n option should be >= 1" (status 1): it runs nothing.
    plan = run_script("echo x.py | xargs -n 0 cp -t /dest\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


# xargs -I whose first line holds an unmatched quote runs nothing and fails (checked under bash 5.2.15 and
# dash 0.5.12 with GNU findutils 4.9).
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_xargs_i_whose_first_line_holds_an_unmatched_quote_runs_nothing_and_fails(run: str) -> None:
    plan = run_script("xargs -I{} cp x.py /dest/{} <<EOF || cp x.py /dest/failed\nit's\nok\nEOF\n", run=run)
    assert in_dest(plan) == ["/dest/failed"]
    assert notes(plan) == [("fails", 1, "xargs -I{} cp x.py /dest/{} <<EOF",
                            "xargs finds an unmatched quote in its input (status 1) and runs nothing")]


@pytest.mark.parametrize("options", ["-I{} cp x.py /dest/{}", "-n1 cp x.py -t /dest"])
def test_xargs_runs_the_items_before_an_unmatched_quote(options: str) -> None:
    plan = run_script(f"cp x.py ok\nxargs {options} <<EOF\nok\nit's\nEOF\n")
    assert "/dest/ok" in in_dest(plan)
