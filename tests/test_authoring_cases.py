"""The cases ``patcher test`` runs, judged on failing input: a rule example the rule gets wrong."""

from __future__ import annotations

from patcher.authoring.cases import Case, Check, run_case
from patcher.checks.base import Invalid, Valid


def test_a_valid_rule_example_the_rule_reports_fails_with_what_it_found() -> None:
    case = Case("rule python-3.10", "VALID 1", Check.RULE_VALID, rule="python-3.10", rule_example=Valid("def f(:\n"))
    result = run_case(case)
    assert not result.passed
    assert result.message == "the rule reports code it must accept"
    lines = result.diff.splitlines()
    assert lines[:3] == ["--- expected", "+++ got", "@@ -1 +1 @@"]
    assert lines[3] == "-no violation"
    assert lines[4].startswith("+line 1: ")


def test_an_invalid_rule_example_found_at_another_line_fails() -> None:
    code = "x = 1\ndef f(:\n"
    assert run_case(Case("rule python-3.10", "INVALID 1", Check.RULE_INVALID, rule="python-3.10",
                         rule_example=Invalid(code, line=2, found=""))).passed
    result = run_case(Case("rule python-3.10", "INVALID 1", Check.RULE_INVALID, rule="python-3.10",
                           rule_example=Invalid(code, line=1, found="")))
    assert not result.passed
    assert result.message == "the rule does not report line 1 with ''"
    assert "-line 1: ......" in result.diff.splitlines()
    assert any(line.startswith("+line 2: ") for line in result.diff.splitlines())
