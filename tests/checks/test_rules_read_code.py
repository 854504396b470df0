"""The rules read code, not text: comments and strings never count, a name counts however Python would spell it (NFKC),
and CRLF or a missing final newline change nothing."""

from __future__ import annotations

from patcher.checks import run_rules

from tests.fixtures_rules import POLICY


def test_comments_and_strings_never_count() -> None:
    code = (
        "# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
        "# ops.paged_attention_v2(output)\n"
        "# HAS_TRITON = True\n"
        "NOTE = 'context_attention_fwd(q) and HAS_TRITON = True'\n"
    )
    result = run_rules([("a.py", code.encode)], POLICY)
    assert result.violations == ()


def test_nfkc_spelling_of_the_kernel_name_is_still_the_kernel() -> None:
    # Python folds identifiers with NFKC: this is the same name, spelled with a fullwidth letter.
    code = "from vllm.attention.ops.prefix_prefill import \uff43ontext_attention_fwd\n"
    result = run_rules([("a.py", code.encode)], POLICY)
    assert [v.rule for v in result.violations] == ["no-triton-kernels"]


def test_crlf_and_no_final_newline_are_read_as_code() -> None:
    code = b"if HAS_TRITON:\r\n    from x.prefix_prefill import context_attention_fwd"
    result = run_rules([("a.py", lambda: code)], POLICY)
    assert [(v.rule, v.line) for v in result.violations] == [("no-triton-kernels", 2)]
