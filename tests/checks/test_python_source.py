"""How a rule reads a shipped file (``PythonSource``): its text, the lines and code it quotes, syntax newer than 3.10.

The inputs are shaped like the vendor's paged_attn.py: CRLF, a coding
line, long calls split over lines.
"""

from __future__ import annotations

import ast
import sys

import pytest

from patcher.checks.base import PythonSource
from patcher.checks.syntax_index import called_name

CALL = (
    "def forward_decode(output, query):\r\n"
    "    ops.paged_attention_v2(output, exp_sums,\r\n"
    "                           max_logits, tmp_output,\r\n"
    "                           query)  # V2: no kernel on BI-V100\r\n"
)


def _source(code: str | bytes, path: str = "qwen3_6_scripts/paged_attn.py") -> PythonSource:
    return PythonSource(path, code.encode() if isinstance(code, str) else code)


def _first(source: PythonSource, kind: type) -> ast.AST:
    return source.index.of(kind)[0]


def test_a_call_split_over_lines_is_shown_on_one_line() -> None:
    source = _source(CALL)
    call = _first(source, ast.Call)
    assert source.segment(call) == ("ops.paged_attention_v2(output, exp_sums,\r\n"
                                    "                           max_logits, tmp_output,\r\n"
                                    "                           query)")
    assert source.code(call) == "ops.paged_attention_v2(output, exp_sums, max_logits, tmp_output, query)"
    assert source.line(call) == 2
    two_lines = _source("x = f(a,\n      b)\n")
    assert two_lines.segment(_first(two_lines, ast.Call)) == "f(a,\n      b)"


def test_a_segment_counts_utf8_bytes_and_stays_on_its_line() -> None:
    source = _source("# -*- coding: latin-1 -*-\nlabel = 'caf\xe9'; n = f(1)\n".encode("latin-1"))
    assert source.text.splitlines()[1] == "label = 'café'; n = f(1)"
    assert source.segment(_first(source, ast.Call)) == "f(1)"
    assert source.code(_first(source, ast.Constant)) == "'café'"


def test_the_file_as_a_whole_is_line_0() -> None:
    source = _source("x = 1\n")
    assert source.line(source.tree) == 0
    assert source.line(_first(source, ast.Assign)) == 1


@pytest.mark.parametrize("width, shown", [(89, None), (90, None), (91, 90), (120, 90)])
def test_long_code_is_cut_to_90_characters(width: int, shown: int | None) -> None:
    name = "x" * (width - 2)
    source = _source(f"{name}()\n")
    text = source.code(_first(source, ast.Call))
    if shown is None:
        assert text == f"{name}()"
    else:
        assert text == name[:87] + "..." and len(text) == shown


def test_newer_syntax_is_still_read_and_remembered() -> None:
    source = _source("try:\n    decode()\nexcept* NotImplementedError:\n    fallback()\n")  # 3.11 grammar
    if sys.version_info < (3, 11):  # this interpreter cannot read it either
        with pytest.raises(SyntaxError):
            source.tree
        return
    assert [called_name(c) for c in source.index.of(ast.Call)] == ["decode", "fallback"]
    assert source.newer_syntax is not None and "3.11" in str(source.newer_syntax.msg)
    assert source.newer_syntax.filename == "qwen3_6_scripts/paged_attn.py"
    plain = _source("def f(*args):\n    pass\n")
    assert isinstance(plain.tree, ast.Module) and plain.newer_syntax is None
