"""A shipped file that does not parse: python-3.10 says where Python says, and no other rule reads it."""

from __future__ import annotations

from patcher.checks import run_rules

from tests.fixtures_rules import POLICY, python_3_10_findings


def test_a_syntax_error_that_no_grammar_reads_is_where_python_says() -> None:
    assert python_3_10_findings(b"x = 1\r\nout = (q,\r\n") == [(2, "does not parse: '(' was never closed")]


def test_null_bytes_are_a_file_level_finding() -> None:
    assert python_3_10_findings(b"x = 1\n# \x00\ny = 2\n") == [(0, "does not parse: source code string cannot contain null bytes")]


def test_an_unparsable_file_gets_only_the_python_3_10_finding() -> None:
    result = run_rules([("bad.py", lambda: b"def f(:\n    context_attention_fwd()\n")], POLICY)
    assert [(v.rule, v.line) for v in result.violations] == [("python-3.10", 1)]
