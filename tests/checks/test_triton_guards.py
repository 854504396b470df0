"""Rule no-triton-kernels under guards: a finding names the ``if``/``try`` it sits under as written, and says a ``try``
does not help (a hang cannot be caught); under a guard that can never hold, the finding is a note that says why."""

from __future__ import annotations

from patcher.checks.no_triton_kernels import NoTritonKernels

from tests.fixtures_rules import HANG, errors_in, findings

RULE = NoTritonKernels()


def test_an_import_and_a_call_under_try_say_a_try_cannot_catch_a_hang() -> None:
    code = """\
# Triton V2 decode for sequences past 8K (tried first, PyTorch otherwise).
try:
    from .paged_attention_v2_triton import paged_attention_v2_triton
    _HAS_TRITON_V2 = True
except ImportError:
    _HAS_TRITON_V2 = False


def forward_decode(query, seq_lens, max_len):
    if _HAS_TRITON_V2 and max_len > 8192:
        try:
            return paged_attention_v2_triton(query, seq_lens)
        except Exception:
            pass
    return _forward_decode_pytorch(query, seq_lens)
"""
    assert errors_in(RULE, code) == [
        (3, f"imports paged_attention_v2_triton from .paged_attention_v2_triton, under `try:` ({HANG})"),
        (12, "calls paged_attention_v2_triton(...), imported from .paged_attention_v2_triton, "
             f"under `try:` ({HANG})"),
    ]


def test_an_import_under_if_names_the_test_as_written() -> None:
    code = """\
import torch
if torch.cuda.is_available() and not _IS_BI100:
    from vllm.attention.ops.prefix_prefill import context_attention_fwd as _ctx_fwd
"""
    assert errors_in(RULE, code) == [
        (3, "imports context_attention_fwd as _ctx_fwd from vllm.attention.ops.prefix_prefill, "
            "under `if torch.cuda.is_available() and not _IS_BI100:`"),
    ]


def test_the_else_branch_and_the_handler_of_a_guard_say_where_they_are() -> None:
    code = """\
if _USE_PYTORCH_PREFILL:
    pass
else:
    from vllm.attention.ops import prefix_prefill
try:
    import numpy
except ImportError:
    from vllm.attention.ops.triton_flash_attention import triton_attention
"""
    assert errors_in(RULE, code) == [
        (4, "imports prefix_prefill from vllm.attention.ops, under `if _USE_PYTORCH_PREFILL:`"),
        # A handler is not the try body: the message does not blame `try:` for it.
        (8, "imports triton_attention from vllm.attention.ops.triton_flash_attention"),
    ]


def test_a_guard_outside_the_function_is_not_the_functions_guard() -> None:
    code = """\
if HAVE_KERNELS:
    def prefill(q):
        from vllm.attention.ops.prefix_prefill import context_attention_fwd
        return context_attention_fwd(q)
"""
    assert errors_in(RULE, code) == [
        (3, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (4, "calls context_attention_fwd(...)"),
    ]


def test_a_lambda_does_not_hide_the_guard_around_it() -> None:
    code = """\
if HAS_KERNEL:
    PREFILL = lambda q: context_attention_fwd(q)
"""
    assert errors_in(RULE, code) == [(2, "calls context_attention_fwd(...), under `if HAS_KERNEL:`")]


def test_plain_imports_and_references_say_which_guard_they_sit_under() -> None:
    code = """\
try:
    import vllm.attention.ops.prefix_prefill as pp
except ImportError:
    pp = None
if pp is not None:
    PREFILL = pp.context_attention_fwd
"""
    assert errors_in(RULE, code) == [
        (2, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`), "
            f"under `try:` ({HANG})"),
        (6, "refers to pp.context_attention_fwd, under `if pp is not None:`"),
    ]


def test_code_that_cannot_run_is_a_note_with_the_reason() -> None:
    code = """\
import vllm.attention.ops.prefix_prefill as pp
def prefill(q):
    prefill_ok = False
    if prefill_ok:
        return pp.context_attention_fwd(q)
    return q
"""
    assert findings(RULE, code) == [
        ("example.py", 1, "error",
         "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`)"),
        ("example.py", 5, "note", "calls pp.context_attention_fwd(...), under `if prefill_ok:`: "
                                  "cannot run: `prefill_ok` is always False here (line 3)"),
    ]
