"""How rules read a shipped file: ``PythonSource``, ``BuildContext``, the syntax index and helpers.

Written against the survivors of a mutation run of ``patcher/checks/base.py``;
the fixtures are shaped like the vendor's paged_attn.py (CRLF, a coding
line, long calls split over lines).
"""

from __future__ import annotations

import ast
import sys

import pytest

from patcher.checks.base import BuildContext, PythonSource, Settings, Severity, Violation
from patcher.checks.syntax_index import (SyntaxIndex, called_name, contains, dotted, function_of, identifier,
                                         integer_value)

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


def test_mentions_looks_at_bytes_and_trusts_no_non_ascii_file() -> None:
    assert _source("ops.paged_attention_v2(o)\n").mentions("paged_attention_v1", "paged_attention_v2")
    assert not _source("ops.paged_attention_v1(o)\n").mentions("paged_attention_v2")
    assert _source("# café\nx = 1\n").mentions("paged_attention_v2")  # could be spelled in NFKC letters


def test_an_identifier_is_read_as_python_folds_it() -> None:
    assert identifier("ｐaged_attention_v2") == "paged_attention_v2"
    assert identifier("ﬁle") == "file"
    assert identifier("use_v1") == "use_v1"


def test_settings_make_violations_with_the_policys_severity_and_notes() -> None:
    settings = Settings("v1-length-limit", Severity.WARNING, "V1 fails past 32K", {"max-tokens": 32768})
    assert settings.violation("a.py", 3, "found") == Violation("v1-length-limit", Severity.WARNING, "a.py", 3, "found")
    assert settings.note("a.py", 4, "dead") == Violation("v1-length-limit", Severity.NOTE, "a.py", 4, "dead")
    assert Settings("python-3.10", Severity.ERROR, "3.10").params == {}


def test_a_build_context_reads_its_files_as_they_will_be_written() -> None:
    files = {"qwen3_6_scripts/patch_ops.sh": b"\xef\xbb\xbfset -e\r\ncp \xff ./x\n",
             "qwen3_6_scripts/paged_attn.py": b"x = 1\n"}
    build = BuildContext(plan=None, targets=(), python=("qwen3_6_scripts/paged_attn.py", "qwen3_6_scripts/other.py"),
                         reader=files.__getitem__, words={"paged_attention_v2": ["qwen3_6_scripts/paged_attn.py"]})
    assert build.read("qwen3_6_scripts/patch_ops.sh").startswith(b"\xef\xbb\xbf")
    assert build.read("Dockerfile.missing") == b""
    assert build.text("qwen3_6_scripts/patch_ops.sh") == "set -e\r\ncp \ufffd ./x\n"
    assert build.text("missing.sh") == ""
    source = build.source("qwen3_6_scripts/paged_attn.py")
    assert source is not None and (source.path, source.data) == ("qwen3_6_scripts/paged_attn.py", b"x = 1\n")
    assert build.source("qwen3_6_scripts/other.py") is None
    assert build.mentioning("paged_attention_v2") == ["qwen3_6_scripts/paged_attn.py"]
    assert build.mentioning("HAS_TRITON") == ("qwen3_6_scripts/paged_attn.py", "qwen3_6_scripts/other.py")
    assert BuildContext(None, (), (), files.__getitem__).words == {}


def test_dotted_and_called_names() -> None:
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


NESTED = """\
class PagedAttention:
    @staticmethod
    def forward_decode(q):
        out = [lambda: ops.paged_attention_v1(q)]
        ops.paged_attention_v1(q)
        return ops.paged_attention_v2(q, f(g(q)))
"""


def test_the_index_knows_every_node_its_parent_and_where_each_call_sits() -> None:
    source = _source(NESTED)
    index = source.index
    assert index.tree is source.tree
    (cls,) = index.of(ast.ClassDef)
    (function,) = index.of(ast.FunctionDef)
    (lam,) = index.of(ast.Lambda)
    assert [c.lineno for c in index.of(ast.Call)] == [4, 5, 6, 6, 6]  # source order
    assert [called_name(c) for c in index.of(ast.Call)] == [
        "paged_attention_v1", "paged_attention_v1", "paged_attention_v2", "f", "g"]
    assert index.of(ast.While) == []
    assert index.parent(source.tree) is None and index.parent(cls) is source.tree
    assert index.parent(function) is cls
    inner, outer = index.calls("paged_attention_v1")
    assert index.ancestors(outer)[:3] == (source.tree, cls, function)
    assert isinstance(index.ancestors(outer)[-1], ast.Expr)
    assert index.calls("paged_attention_v1", inside=lam) == [inner]
    assert index.calls("paged_attention_v1", inside=function) == [inner, outer]
    assert index.calls("paged_attention_v3") == []
    assert function_of(index, inner) is lam and function_of(index, outer) is function
    assert function_of(index, cls) is None
    assert contains(index.ancestors(outer), function) and not contains(index.ancestors(outer), lam)
    assert not contains((ast.parse("x"),), source.tree)  # equal-looking is not the same place

