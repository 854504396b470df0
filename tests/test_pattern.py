"""The pattern engine matches syntax, not text."""

from __future__ import annotations

import warnings

import libcst as cst
import pytest

from patcher.transforms.pattern import (
    Pattern,
    PatternSyntaxError,
    contains,
    decode_metavariables,
    find_expressions,
    find_statements,
)


def _module(code: str) -> cst.Module:
    return cst.parse_module(code)


def _code(module: cst.Module, node: object) -> str:
    if isinstance(node, tuple):
        return "".join(module.code_for_node(n) for n in node)
    return module.code_for_node(node)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "target",
    [
        "x = f(a, b)\n",
        "x = f(a,b)  # a comment\n",
        "x = (f(a, b))\n",
        "x = f(\n    a,\n    # between\n    b,\n)\n",
        "x=f( a , b )\r\n",
    ],
    ids=["plain", "spacing-and-comment", "parentheses", "line-breaks-and-trailing-comma", "crlf"],
)
def test_layout_does_not_matter(target: str) -> None:
    assert len(find_statements(Pattern.parse("x = f(a, b)"), _module(target))) == 1


@pytest.mark.parametrize(
    ("pattern", "target"),
    [("x = 'a'", 'x = "a"'), ("x = 16", "x = 0x10"), ("x = 1.0", "x = 1.00"), ("y = f(a=1)", "y = f(a = 1)")],
)
def test_literals_compare_by_value(pattern: str, target: str) -> None:
    assert contains(Pattern.parse(pattern), _module(target + "\n"))


@pytest.mark.parametrize(
    ("pattern", "target"),
    [("x = f(a, b)", "x = f(b, a)"), ("x = f(a)", "x = g(a)"), ("x = f(a=1)", "x = f(1)"), ("x = a + b", "x = a - b")],
)
def test_different_code_does_not_match(pattern: str, target: str) -> None:
    assert not contains(Pattern.parse(pattern), _module(target + "\n"))


def test_single_metavariable_binds_and_must_repeat_consistently() -> None:
    module = _module("y = max(m, m)\nz = max(m, n)\n")
    found = find_statements(Pattern.parse("$OUT = max($A, $A)"), module)
    assert [_code(module, f.bindings["OUT"]) for f in found] == ["y"]


def test_sequence_metavariable_takes_any_run_of_arguments() -> None:
    module = _module("ops.v1(out, q, k, v, scale=s)\n")
    found = find_statements(Pattern.parse("ops.v1(out, $...REST)"), module)
    assert _code(module, found[0].bindings["REST"]) == "q, k, v, scale=s"


def test_sequence_metavariable_takes_any_run_of_statements() -> None:
    module = _module("if x:\n    a = 1\n    # note\n    b = 2\n    call(a, b)\nelse:\n    pass\n")
    found = find_statements(Pattern.parse("if x:\n    $...BODY\n    call($...)\nelse:\n    pass\n"), module)
    assert len(found) == 1
    assert _code(module, found[0].bindings["BODY"]) == "a = 1\n# note\nb = 2\n"


def test_statement_runs_match_across_blank_lines_and_comments() -> None:
    module = _module("a = 1\n\n# why b\nb = 2\nc = 3\n")
    found = find_statements(Pattern.parse("a = 1\nb = 2"), module)
    assert (found[0].start, found[0].end) == (0, 2)


def test_one_line_suite_equals_an_indented_block() -> None:
    assert contains(Pattern.parse("if x:\n    return y"), _module("def f():\n    if x: return y\n"))


def test_expressions_are_found_inside_statements() -> None:
    module = _module("total = g(s.amax(dim=-1)) + t.amax(dim=-1)\n")
    found = find_expressions(Pattern.parse("$X.amax(dim=-1)").expression, module)
    assert sorted(_code(module, b["X"]) for _, b in found) == ["s", "t"]


def test_a_pattern_that_is_not_python_says_where() -> None:
    with pytest.raises(PatternSyntaxError, match="line 1"):
        Pattern.parse("x = = 1")


def test_metavariables_read_back_for_messages() -> None:
    assert str(Pattern.parse("f($X,\n  $...REST)")) == "f($X, / $...REST)"
    assert decode_metavariables("f(__pv_X__, __pvs_REST__, __pvs____)") == "f($X, $...REST, $...)"


def test_a_vendor_string_with_an_invalid_escape_matches_by_value_without_a_warning() -> None:
    # re.compile("\d+") is everywhere in vendor code; evaluating it warns
    # (SyntaxWarning on 3.12+, DeprecationWarning before), which a user of
    # `patcher apply` would see once per comparison.
    module = cst.parse_module('SPLIT = re.compile(r"\\d+")\nJOIN = re.compile("\\d+")\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(find_statements(Pattern.parse('$NAME = re.compile("\\d+")'), module)) == 2
        assert not contains(Pattern.parse('SPLIT = re.compile("\\w+")'), module)
    assert [str(w.message) for w in caught] == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # python -W error: the value still decides
        assert contains(Pattern.parse('SPLIT = re.compile("\\d+")'), module)


def test_literals_python_cannot_evaluate_are_compared_by_their_spelling() -> None:
    # libcst reads b"é" and a 5000-digit number; ast.literal_eval refuses both.
    module = cst.parse_module('MAGIC = b"\xe9"\nBIG = ' + "7" * 5000 + "\n")
    assert contains(Pattern.parse('MAGIC = b"\xe9"'), module)
    assert not contains(Pattern.parse('MAGIC = b"\xe8"'), module)
    assert contains(Pattern.parse("BIG = " + "7" * 5000), module)
    assert not contains(Pattern.parse("BIG = " + "7" * 4999 + "8"), module)
