"""``expr``: what it prints and its status, as GNU coreutils 9.1 gives them.

expr prints its value and succeeds, except where the value is empty or zero
(``0``, ``-0``, ``00``, ``""``), where it fails with status 1, and a bad
expression (a syntax error, a word that is no integer in arithmetic, a
division by zero), status 2. Under ``set -e`` a count that reaches 0
(``i=$(expr $i - 1)``) ends the script. What needs a regular expression
(``:``, ``match``) or the locale (the order of two strings, a length past
ASCII) is the image's to say. Every row was run with GNU expr 9.1.
"""

from __future__ import annotations

import pytest

from patcher.shipping.expr_program import run_expr
from tests.shipping.conftest import in_dest, notes, run_script


@pytest.mark.parametrize(("args", "printed", "status"), [
    (["1", "+", "1"], "2", 0), (["1", "-", "1"], "0", 1), (["3", "-", "4"], "-1", 0),
    (["1", "+", "2", "*", "3"], "7", 0), (["(", "1", "+", "2", ")", "*", "3"], "9", 0),
    (["5", "/", "2"], "2", 0), (["-5", "/", "2"], "-2", 0), (["-5", "%", "3"], "-2", 0), (["5", "%", "-3"], "2", 0),
    (["99999999999999999999", "+", "1"], "100000000000000000000", 0),
    # A single word is its own value: empty or all zeros (a '-' before them too) is null.
    (["0"], "0", 1), (["-0"], "-0", 1), (["00"], "00", 1), ([""], "", 1), (["-"], "-", 0), (["abc"], "abc", 0),
    (["--", "1"], "1", 0), (["--", "--"], "--", 0),
    # Comparisons: two integers as numbers, other words by equality; the value is 1 or 0.
    (["a", "=", "a"], "1", 0), (["a", "=", "b"], "0", 1), (["1", "=", "01"], "1", 0), (["a", "!=", "b"], "1", 0),
    (["2", "<", "10"], "1", 0), (["10", "<=", "9"], "0", 1), (["2", ">=", "2"], "1", 0), (["2", ">", "2"], "0", 1),
    (["1", "<", "2", "=", "1"], "1", 0),
    # '|' gives the first that is not null (else 0), '&' the first unless either is null; the other side of a
    # decided '|' or '&' is not worked out, so it cannot fail.
    (["0", "|", "a"], "a", 0), (["0", "|", "0"], "0", 1), (["", "|", ""], "0", 1), (["a", "|", "b"], "a", 0),
    (["a", "&", "b"], "a", 0), (["a", "&", "0"], "0", 1), (["0", "&", "1"], "0", 1),
    (["1", "|", "1", "/", "0"], "1", 0), (["0", "&", "1", "/", "0"], "0", 1),
    (["x", "|", "y", "&", "0"], "x", 0),
    # The keywords, and '+' to take one as a word.
    (["length", "abc"], "3", 0), (["length", ""], "0", 1), (["+", "length"], "length", 0),
    (["=", "=", "="], "1", 0),
    (["substr", "abcdef", "2", "3"], "bcd", 0), (["substr", "abc", "0", "1"], "", 1),
    (["substr", "abc", "x", "1"], "", 1), (["substr", "abc", "3", "9"], "c", 0),
    (["index", "abc", "cb"], "2", 0), (["index", "abc", "x"], "0", 1),
])
def test_expr_prints_its_value_and_fails_where_it_is_null(args: list[str], printed: str, status: int) -> None:
    assert run_expr(args) == (printed + "\n", status)


@pytest.mark.parametrize("args", [[], ["1", "/", "0"], ["a", "+", "1"], ["(", "1"], [")"], ["1", "+"], ["1", "2"],
                                  ["a", "=="], ["(", ")"], ["length", "length"]])
def test_a_bad_expression_prints_nothing_and_fails_with_status_2(args: list[str]) -> None:
    assert run_expr(args) == ("", 2)


@pytest.mark.parametrize("args", [["abc", ":", "a"], ["match", "abc", "a"], ["a", "<", "b"], ["length", "é"],
                                  ["index", "é", "x"], ["(", ] * 5000])
def test_what_needs_a_regex_or_the_locale_is_left_to_the_image(args: list[str]) -> None:
    assert run_expr(args) is None


@pytest.mark.parametrize("args", [["9" * 5000, "=", "1"], ["9" * 5000, "+", "1"], ["9" * 3000, "*", "9" * 3000],
                                  ["2", *["*", "9" * 900] * 20]])
def test_a_number_past_what_the_reader_keeps_is_unknown(args: list[str]) -> None:
    """GNU expr computes with any number of digits; the reader neither crashes nor works for minutes on them."""
    assert run_expr(args) is None
    assert run_expr(["9" * 5000]) == ("9" * 5000 + "\n", 0)  # a word alone is printed as it is


@pytest.mark.parametrize(("script", "dest"), [
    ("expr 1 - 1 >/dev/null || cp x.py /dest/zero$?.py\n", ["/dest/zero1.py"]),
    ("expr '' >/dev/null || cp x.py /dest/empty$?.py\n", ["/dest/empty1.py"]),
    ("expr 1 + a >/dev/null 2>&1 || cp x.py /dest/bad$?.py\n", ["/dest/bad2.py"]),
    ("i=1\ni=$(expr $i + 1)\ncp x.py /dest/$i.py\n", ["/dest/2.py"]),
    ("if expr \"$HOME\" = /root >/dev/null; then cp x.py /dest/root.py; fi\n", ["/dest/root.py"]),
    # set -e: the assignment's status is expr's, and a count that reaches 0 ends the script.
    ("set -e\ni=1\ni=$(expr $i - 1)\ncp x.py /dest/after.py\n", []),
])
def test_a_script_follows_what_expr_prints_and_its_status(script: str, dest: list[str]) -> None:
    for shell in ("bash i.sh", "dash i.sh"):
        assert in_dest(run_script(script, shell)) == dest


# expr 1 | match ... does not evaluate its right side (checked under bash 5.2.15 and dash 0.5.12 with GNU
# coreutils 9.1).
@pytest.mark.parametrize(("expression", "printed"), [("1 \\| match abc b", "1"), ("0 \\& match abc b", "0")])
def test_expr_does_not_evaluate_a_match_it_does_not_need(expression: str, printed: str) -> None:
    plan = run_script(f'V=$(expr {expression})\ncp x.py "/dest/v$V"\n')
    assert in_dest(plan) == [f"/dest/v{printed}"]
    assert notes(plan) == []
