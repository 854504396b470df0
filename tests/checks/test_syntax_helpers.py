"""The names and numbers rules read out of syntax: identifiers as Python folds them, dotted and called names,
and the constant arithmetic thresholds are written in."""

from __future__ import annotations

import ast

import pytest

from patcher.checks.syntax_index import called_name, dotted, identifier, integer_value


def test_an_identifier_is_read_as_python_folds_it() -> None:
    assert identifier("ｐaged_attention_v2") == "paged_attention_v2"
    assert identifier("ﬁle") == "file"
    assert identifier("use_v1") == "use_v1"


def test_dotted_and_called_names_are_read_from_plain_names_and_attributes_only() -> None:
    expr = ast.parse("torch.ops._C.paged_attention_v2").body[0].value  # type: ignore[attr-defined]
    assert dotted(expr) == "torch.ops._C.paged_attention_v2"
    assert dotted(ast.parse("get_ops().paged_attention_v2").body[0].value) == ""  # type: ignore[attr-defined]
    assert dotted(None) == "" and dotted(ast.Constant(1)) == ""
    calls = [node for node in ast.walk(ast.parse("ops.v1(x)\nv2(x)\nkernels[0](x)\n")) if isinstance(node, ast.Call)]
    assert sorted(called_name(c) for c in calls) == ["", "v1", "v2"]


@pytest.mark.parametrize("text, value", [
    ("32768", 32768), ("32 * 1024", 32768), ("1 << 15", 32768), ("2 ** 15", 32768), ("65536 // 2", 32768),
    ("32000 + 768", 32768), ("33000 - 232", 32768), ("(8 + 8) * 2048", 32768), ("1 << 63", 1 << 63),
    ("2 ** 63", 2 ** 63), ("32768 << 0", 32768), ("32768 ** 1", 32768), ("2 ** 0", 1), ("65537 // 2", 32768),
    ("1 << 64", None), ("2 ** 64", None), ("1 << -1", None), ("2 ** -1", None),
    ("1 // 0", None), ("32768.0", None), ("True", None), ("x * 2", None), ("2 * x", None), ("-32768", None),
    ("32768 % 7", None), ("'32768'", None),
])
def test_integer_value_folds_the_constant_arithmetic_thresholds_are_written_in(text: str, value: int | None) -> None:
    found = integer_value(ast.parse(text, mode="eval").body)
    assert found == value and type(found) is type(value)
