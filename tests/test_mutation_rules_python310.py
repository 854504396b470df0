"""Rule python-3.10: the exact line and message for each way a shipped file is not Python 3.10.

Files are read as bytes, the way they come out of a vendor zip (CRLF,
Latin-1 comments, a BOM), and checked as ``check`` checks them.
"""

from __future__ import annotations

import sys

import pytest

from patcher.checks.base import PythonSource
from patcher.checks.examples import example_settings
from patcher.checks.python_3_10 import Python310

RULE = Python310()
NEWER = "syntax newer than Python 3.10"


def _found(data: bytes) -> list[tuple[int, str]]:
    """Return (line, message) of every finding in ``data`` read as qwen3_6_scripts/qwen3_5.py."""
    found = list(RULE.check_file(PythonSource("qwen3_6_scripts/qwen3_5.py", data), example_settings(RULE)))
    assert all(v.path == "qwen3_6_scripts/qwen3_5.py" and v.severity.value == "error" for v in found)
    return [(v.line, v.message) for v in found]


@pytest.mark.parametrize("data", [
    b"import torch\r\n\r\n# r\xe9glage du noyau\r\nx = 1\r\n",
    b"import torch\n\n# r\xe9glage du noyau",
    b"\nimport torch\n# r\xe9glage du noyau\n",
])
def test_a_latin_1_comment_in_a_utf_8_file_is_found_at_its_line(data: bytes) -> None:
    assert _found(data) == [(3, "cannot be decoded: byte 0xe9 is not utf-8 (declare the file's encoding with a "
                                "'# -*- coding: ... -*-' line), so Python will not import it")]


def test_a_file_that_declares_its_encoding_decodes() -> None:
    assert _found(b"# -*- coding: latin-1 -*-\r\n# r\xe9glage du noyau\r\nx = 1\r\n") == []
    assert _found(b"\xef\xbb\xbfimport torch\n") == []


def test_undecodable_first_lines_fail_where_python_reads_the_coding_line() -> None:
    assert _found(b"\xff\xfe = 1\n") == [
        (0, "cannot be decoded: invalid or missing encoding declaration, so Python will not import it")]


def test_every_newer_construct_is_named_at_its_own_line_in_order() -> None:
    data = (b"def run(x, a):\r\n"
            b"    try:\r\n"
            b"        pass\r\n"
            b"    except* (ValueError, TypeError):\r\n"
            b"        pass\r\n"
            b"    except* OSError:\r\n"
            b"        pass\r\n"
            b"    return x[*a]\r\n")
    found = [(4, f"uses `except*` (3.11, PEP 654), {NEWER}"),
             (8, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")]
    # A 3.10 interpreter cannot parse the file at all: libcst names the first construct only.
    assert _found(data) == (found if sys.version_info >= (3, 11) else found[:1])


def test_a_star_in_a_subscript_split_over_lines_is_found_at_the_star() -> None:
    data = b"shape = x[\n    batch,\n    *rest]\n"
    assert _found(data) == [(3, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")]


def test_stars_that_python_3_10_reads_are_fine() -> None:
    data = (b"y = x[(*a, b)]\n"
            b"z = [*a, *b]\n"
            b"w = x[a, (*b,)]\n"
            b"v = x[[*a]]\n"
            b"def f(*args: int, **kw: int) -> None:\n    pass\n")
    assert _found(data) == []


def test_a_star_annotation_on_args_split_over_lines_is_found_at_args() -> None:
    data = b"def f(\n    a,\n    *args: *Ts,\n):\n    pass\n"
    assert _found(data) == [(3, f"uses a star annotation on *args (3.11, PEP 646), {NEWER}")]


def test_a_syntax_error_that_no_grammar_reads_is_where_python_says() -> None:
    assert _found(b"x = 1\r\nout = (q,\r\n") == [(2, "does not parse: '(' was never closed")]


def test_a_newer_construct_in_a_file_this_interpreter_cannot_parse_is_named_by_libcst() -> None:
    data = b"import torch\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n"
    assert _found(data) == [(4, f"uses type parameters `[T]` (3.12, PEP 695), {NEWER}")]


def test_several_constructs_in_a_file_this_interpreter_cannot_parse() -> None:
    # Before 3.12 ``ast`` cannot read a type alias, and libcst names the first construct only;
    # from 3.12 on ``ast`` reads the file and every construct is named.
    star = (1, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")
    alias = (2, f"uses a `type` alias statement (3.12, PEP 695), {NEWER}")
    both = sys.version_info >= (3, 12)
    assert _found(b"y = x[*a]\ntype V = int\n") == ([star, alias] if both else [star])
    annotation = (1, f"uses a star annotation on *args (3.11, PEP 646), {NEWER}")
    assert _found(b"def f(*args: *Ts): pass\ntype V = int\n") == ([annotation, alias] if both else [annotation])
    except_star = (3, f"uses `except*` (3.11, PEP 654), {NEWER}")
    alias_5 = (5, f"uses a `type` alias statement (3.12, PEP 695), {NEWER}")
    assert _found(b"try:\n    pass\nexcept* ValueError:\n    pass\ntype V = int\n") == (
        [except_star, alias_5] if both else [except_star])
    assert _found(b"x = 1\r\ntype Vector = list[float]\r\n") == [alias]


def test_newer_syntax_libcst_has_no_name_for_is_reported_with_pythons_words() -> None:
    data = b"name = 'x'\ny = f'{name}'\nz = f\"{'a' + \"b\"}\"\n"
    assert _found(data) == [(3, f"uses {NEWER}: f-string: expecting '}}'")]


def test_null_bytes_are_a_file_level_finding() -> None:
    assert _found(b"x = 1\n# \x00\ny = 2\n") == [(0, "does not parse: source code string cannot contain null bytes")]
