"""Patterns match on syntax, not text: layout, the spelling of a literal, a def's parameters.

A pattern written from the vendor's code matches that code however it is
laid out (spacing, comments, line breaks, parentheses, CRLF, one-line
suites); literals compare by value, and by their spelling where Python
cannot evaluate them; anything else that differs is other code.
"""

from __future__ import annotations

import warnings

import libcst as cst
import pytest

from patcher.transforms.pattern import Pattern, contains, find_statements


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
    assert len(find_statements(Pattern.parse("x = f(a, b)"), cst.parse_module(target))) == 1


def test_statement_runs_match_across_blank_lines_and_comments() -> None:
    module = cst.parse_module("a = 1\n\n# why b\nb = 2\nc = 3\n")
    found = find_statements(Pattern.parse("a = 1\nb = 2"), module)
    assert (found[0].start, found[0].end) == (0, 2)


def test_one_line_suite_equals_an_indented_block() -> None:
    assert contains(Pattern.parse("if x:\n    return y"), cst.parse_module("def f():\n    if x: return y\n"))


@pytest.mark.parametrize(
    ("pattern", "target"),
    [("x = 'a'", 'x = "a"'), ("x = 16", "x = 0x10"), ("x = 1.0", "x = 1.00"), ("y = f(a=1)", "y = f(a = 1)")],
)
def test_literals_compare_by_value(pattern: str, target: str) -> None:
    assert contains(Pattern.parse(pattern), cst.parse_module(target + "\n"))


@pytest.mark.parametrize(
    ("pattern", "target"),
    [("x = f(a, b)", "x = f(b, a)"), ("x = f(a)", "x = g(a)"), ("x = f(a=1)", "x = f(1)"), ("x = a + b", "x = a - b")],
)
def test_different_code_does_not_match(pattern: str, target: str) -> None:
    assert not contains(Pattern.parse(pattern), cst.parse_module(target + "\n"))


def test_a_pattern_may_start_and_end_with_any_name() -> None:
    module = cst.parse_module("XLA = False\nuse_v2 = max_seq_len > _PARTITION_MAX\n")
    assert contains(Pattern.parse("use_v2 = max_seq_len > _PARTITION_MAX"), module)
    assert contains(Pattern.parse("XLA = False"), module)
    assert not contains(Pattern.parse("use_v2 = max_seq_len > _PARTITION_MA"), module)


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


def test_strings_python_warns_about_still_match_by_spelling_with_warnings_as_errors() -> None:
    # Under `python -W error` evaluating "\d+" is an error; the text decides then.
    module = cst.parse_module('pattern = re.compile("\\d+\\.\\d+")\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert contains(Pattern.parse('pattern = re.compile("\\d+\\.\\d+")'), module)
        assert not contains(Pattern.parse('pattern = re.compile("\\w+")'), module)


def test_literals_python_cannot_evaluate_are_compared_by_their_spelling() -> None:
    # libcst reads b"é" and a 5000-digit number; ast.literal_eval refuses both.
    module = cst.parse_module('MAGIC = b"\xe9"\nBIG = ' + "7" * 5000 + "\n")
    assert contains(Pattern.parse('MAGIC = b"\xe9"'), module)
    assert not contains(Pattern.parse('MAGIC = b"\xe8"'), module)
    assert contains(Pattern.parse("BIG = " + "7" * 5000), module)
    assert not contains(Pattern.parse("BIG = " + "7" * 4999 + "8"), module)


@pytest.mark.parametrize(("source", "found"), [
    ("def _forward_decode_pytorch(self, query):\n    return query\n", 1),
    ("def _forward_decode_pytorch(self, query):  # fallback\n\n    # keep\n    return query\n", 1),
    ("def _forward_decode_pytorch(self, query, *args):\n    return query\n", 0),
    ("def _forward_decode_pytorch(self, query, *, scale):\n    return query\n", 0),
    ("def _forward_decode_pytorch(self, query, /):\n    return query\n", 0),
])
def test_a_def_pattern_compares_star_and_slash_parameters(source: str, found: int) -> None:
    pattern = Pattern.parse("def _forward_decode_pytorch(self, query):\n    $...BODY")
    assert len(find_statements(pattern, cst.parse_module(source))) == found


def test_a_def_pattern_with_star_args_matches_only_star_args() -> None:
    pattern = Pattern.parse("def f(self, *args):\n    $...BODY")
    assert len(find_statements(pattern, cst.parse_module("def f(self, *args):\n    pass\n"))) == 1
    assert not find_statements(pattern, cst.parse_module("def f(self):\n    pass\n"))
