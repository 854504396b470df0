"""A pattern, or a target file, that is not Python is refused saying where: line, column, what the parser expected."""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.transforms.base import ConfigError, parse_pattern
from patcher.transforms.pattern import Pattern, PatternSyntaxError, describe_syntax_error


def test_a_pattern_that_is_not_python_says_where() -> None:
    with pytest.raises(PatternSyntaxError, match="line 1"):
        Pattern.parse("x = = 1")


def test_a_pattern_error_says_line_and_column() -> None:
    with pytest.raises(ValueError, match=r"not valid Python at line 2, column \d+: \S"):
        Pattern.parse("x = 1\ny = = 2")


def test_an_unterminated_string_in_a_pattern_says_so() -> None:
    with pytest.raises(PatternSyntaxError) as raised:
        Pattern.parse('log("decode with v1)')
    assert str(raised.value) == "not valid Python at line 1: tokenizer error: unterminated string literal"


@pytest.mark.parametrize(("text", "message"), [
    ("", "the pattern is empty"),
    ("   \n# only a comment\n", "the pattern is empty"),
    ("x = (", "not valid Python at line 2, column 0: expected one of"),
])
def test_a_pattern_that_is_not_code_says_why(text: str, message: str) -> None:
    with pytest.raises(PatternSyntaxError) as raised:
        Pattern.parse(text)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize("pattern", [
    "  use_v1 = True\nmax_num_partitions = 1",
    "    if use_v1:\n        $...V1\nelse:\n    $...V2",
])
def test_a_pattern_whose_first_line_is_indented_deeper_than_the_next_is_refused(pattern: str) -> None:
    with pytest.raises(PatternSyntaxError, match=r"^not valid Python at line 1, column \d+: "):
        Pattern.parse(pattern)
    with pytest.raises(ConfigError, match=r"pattern in 'pattern' is not valid Python at line 1, column \d+: "):
        parse_pattern("pattern", pattern)


def test_a_target_that_does_not_parse_names_its_line() -> None:
    with pytest.raises(cst.ParserSyntaxError) as raised:
        cst.parse_module("x = 1\ndef f(:\n    pass\n")
    assert describe_syntax_error(raised.value) == "line 3, column 4: expected one of ), *, **, NAME"
