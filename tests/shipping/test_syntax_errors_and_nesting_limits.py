"""Where a script stops parsing, and how deep the reader follows it, as bash 5.2 and dash 0.5.12 read it.

A ``[[`` left open at the end, or holding ``;``, is bash's syntax error: the
commands on the lines before it run, nothing from its line on does. So is a
regex whose ``)`` closes nothing (``[[ ab =~ a) ]]``); one that closes a
``(`` of the ``[[ ]]`` around the test ends the regex (``[[ ( ab =~ a) ]]``). When a list of
commands runs on over several lines inside quotes, and a compound command on
its last line is left open, nothing of that list runs. A backslash that is
the script's last character (no newline after it) is dropped by bash. An
``eval`` of text nested deeper than the reader walks, and an arithmetic
expression nested past the bound of the Python parser, stop the reading or
give an unknown value, and say so. Each expected result was checked by
running the script under bash 5.2.15 and dash 0.5.12.
"""

from __future__ import annotations

import inspect
import sys
from typing import Iterator

import pytest

from tests.shipping.conftest import in_dest, notes, run_script

UNWORKED = "a path that depends on a value the reader cannot work out"


@pytest.mark.parametrize(("line", "why"), [
    ("[[ -e x.py", "a '[[' is not closed"),
    ("[[ -e x.py ; ]] && cp x.py /dest/b", "unexpected ';' in [[ ]]"),
    ("[[ ab =~ a) ]] && cp x.py /dest/b", "unexpected argument to conditional binary operator"),
])
def test_a_conditional_bash_cannot_parse_stops_the_script_at_its_line(line: str, why: str) -> None:
    plan = run_script(f"cp x.py /dest/a\n{line}\ncp x.py /dest/c\n")
    assert in_dest(plan) == ["/dest/a"]
    assert notes(plan) == [("stop", 2, line, f"cannot be parsed as shell ({why}): s/i.sh is not read from here on")]


def test_a_regex_inside_parentheses_ends_at_the_closing_one() -> None:
    plan = run_script("cp x.py /dest/a\n[[ ( ab =~ a) ]] && cp x.py /dest/b\ncp x.py /dest/c\n")
    assert in_dest(plan) == ["/dest/a", "/dest/b", "/dest/c"]


QUOTED_LINES = 'cp x.py /dest/b; echo "1\n2"; echo "3\n4"; echo "5\n6"; echo "7\n8"; echo "9\n10"; if true; then\n'


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_list_run_on_through_quoted_newlines_to_an_open_if_runs_none_of_it(run: str) -> None:
    plan = run_script(QUOTED_LINES, run=run)
    assert in_dest(plan) == []
    assert notes(plan) == [("stop", 7, "", "cannot be parsed as shell (expected 'fi', found 'the end'): s/i.sh is "
                                           "not read from here on")]


def test_the_commands_before_a_long_run_on_list_still_run() -> None:
    plan = run_script(f"cp x.py /dest/a\n{QUOTED_LINES}")
    assert in_dest(plan) == ["/dest/a"]


def test_the_commands_thousands_of_lines_before_the_error_still_run() -> None:
    # However far back the last complete command is, the reader finds it in one parse (bash and dash run it).
    run_on = "cp x.py /dest/b; " + 'echo "1\n2"; ' * 3000 + "if true; then\n"
    plan = run_script(f"cp x.py /dest/a\n{run_on}")
    assert in_dest(plan) == ["/dest/a"]


@pytest.mark.parametrize("script", ["cp x.py /dest/a\\", "cp x.py /dest/a \\"])
def test_bash_drops_a_backslash_that_ends_the_script(script: str) -> None:
    plan = run_script(script)  # alone, it makes no word of its own
    assert in_dest(plan) == ["/dest/a"]
    assert notes(plan) == []


def test_dash_keeps_a_backslash_that_ends_the_script() -> None:
    assert in_dest(run_script("cp x.py /dest/a\\", run="dash i.sh")) == ["/dest/a\\"]


@pytest.fixture
def top_level_headroom() -> Iterator[None]:
    """Python's recursion limit as a run of the reader at the top of a process has it: the test's own frames
    (pytest's) do not shorten what the reader may walk."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 1000)
    yield
    sys.setrecursionlimit(saved)


@pytest.mark.usefixtures("top_level_headroom")
def test_an_eval_nested_deeper_than_the_reader_walks_stops_the_reading() -> None:
    # bash runs all 150 nested subshells: /dest/ok and /dest/after land. The reader parses the text but cannot
    # walk it: it stops there and says so.
    text = "( " * 150 + "true " + ") " * 150
    plan = run_script(f"eval '{text}' && cp x.py /dest/ok\ncp x.py /dest/after\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 1, "nests too deeply to be read: the rest of s/i.sh is not read")]


@pytest.mark.parametrize(("depth", "placed"), [(20, ["/dest/v2"]), (150, [])])
def test_an_arithmetic_expression_nested_too_deep_is_unknown(depth: int, placed: list[str]) -> None:
    # bash and dash give 2 at either depth (/dest/v2).
    expression = "(" * depth + "1" + ")" * depth
    plan = run_script(f'V=$(( {expression} + 1 ))\ncp x.py "/dest/v$V"\n')
    assert in_dest(plan) == placed
    # The note names the expression (clipped, it is long) as what the path depends on.
    assert [(n.kind, n.line, n.reason.startswith("cp /dest/v$(( (((")) for n in plan.notes] == (
        [] if placed else [("unread", 2, True)])
