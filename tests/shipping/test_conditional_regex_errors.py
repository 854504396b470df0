"""A ``[[ ... =~ ]]`` whose regular expression is left open or missing is bash's syntax error (bash 5.2:
"unexpected argument to conditional binary operator"), and so is one followed by a word of its own ("syntax
error in conditional expression"): the note says so."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, plan_of, run_script, script_context


@pytest.mark.parametrize("line", ["[[ a =~ (b ]]", "[[ a =~ ; ]]"])
def test_a_regex_left_open_or_missing_is_a_conditional_operator_error(line: str) -> None:
    plan = plan_of(script_context(f"{line}\n", run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", 1, line, "cannot be parsed as shell (unexpected argument to conditional binary operator): "
                          "s/i.sh is not read from here on")]


@pytest.mark.parametrize("line", ["[[ a =~ b c ]]", "[[ a =~ (b) c ]]", "[[ a =~ b (c) ]]"])
def test_a_word_apart_from_the_regex_is_a_conditional_syntax_error(line: str) -> None:
    # bash 5.2: "syntax error in conditional expression" (the last: "...: unexpected token `('"): a blank outside
    # parentheses ends the regex, and what follows it is not ']]'; bash reads no more of the script.
    plan = plan_of(script_context(f"{line}\ncp x.py /w/after.py\n", run="cd /w/s && bash i.sh"))
    assert "/w/after.py" not in plan.image
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", 1, line, "cannot be parsed as shell (syntax error in conditional expression): "
                          "s/i.sh is not read from here on")]


@pytest.mark.parametrize(("script", "placed"), [
    # bash 5.2: a ']]' glued to the regex is the regex's: 'a(b)]]' matches no 'ab' (status 1), and with no ']]'
    # after it the '[[' is never closed (a syntax error; the reading stops there).
    ("[[ ab =~ a(b)]] ]]\ncp x.py /dest/s$?.py\n", ["/dest/s1.py"]),
    ("[[ ab =~ (b)]] ]]\ncp x.py /dest/s$?.py\n", ["/dest/s1.py"]),
    ("[[ ab =~ a(b)]]\ncp x.py /dest/s$?.py\n", []),
    ("[[ ab =~ a(b) ]]\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"]),
])
def test_a_double_bracket_glued_to_the_regex_is_part_of_it(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed
