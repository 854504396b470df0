"""A ``[[ ... =~ ]]`` whose regular expression is left open or missing is bash's syntax error (bash 5.2:
"unexpected argument to conditional binary operator"): the note says so."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of, script_context


@pytest.mark.parametrize("line", ["[[ a =~ (b ]]", "[[ a =~ ; ]]"])
def test_a_regex_left_open_or_missing_is_a_conditional_operator_error(line: str) -> None:
    plan = plan_of(script_context(f"{line}\n", run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", 1, line, "cannot be parsed as shell (unexpected argument to conditional binary operator): "
                          "s/i.sh is not read from here on")]
