"""An expression pattern is found wherever that kind of expression stands, inside any statement."""

from __future__ import annotations

import libcst as cst

from patcher.transforms.pattern import Pattern, contains, find_expressions

from tests.transforms.conftest import code_of


def test_expressions_are_found_inside_statements() -> None:
    module = cst.parse_module("total = g(s.amax(dim=-1)) + t.amax(dim=-1)\n")
    found = find_expressions(Pattern.parse("$X.amax(dim=-1)").expression, module)
    assert sorted(code_of(module, b["X"]) for _, b in found) == ["s", "t"]


def test_a_bare_metavariable_takes_each_outermost_expression() -> None:
    module = cst.parse_module("use_v1 = max_seq_len <= 8192\nlog(use_v1)\n")
    found = find_expressions(Pattern.parse("$X").expression, module)
    assert [code_of(module, node) for node, _ in found] == ["use_v1", "max_seq_len <= 8192", "log(use_v1)"]
    assert [code_of(module, bindings["X"]) for _, bindings in found] == [
        "use_v1", "max_seq_len <= 8192", "log(use_v1)"]


def test_an_expression_pattern_is_found_only_as_its_own_kind() -> None:
    module = cst.parse_module("out = scale * (q @ k)\nlog(q @ k)\n")
    found = find_expressions(Pattern.parse("q @ k").expression, module)
    assert [code_of(module, node) for node, _ in found] == ["(q @ k)", "q @ k"]


def test_a_marker_may_be_an_expression_inside_a_statement() -> None:
    module = cst.parse_module("def f(max_seq_len):\n    use_v1 = max_seq_len <= 8192\n    return use_v1\n")
    assert contains(Pattern.parse("max_seq_len <= 8192"), module)
    assert not contains(Pattern.parse("max_seq_len <= 4096"), module)
