"""Rule no-triton-kernels through ``check`` and ``apply``, on the shapes real versions of the vendor tree took.

Each shape is written here in its own words (never vendor code): it must
fail ``check`` naming the rule, and ``apply`` must refuse it (exit 2,
nothing written, one line per error); Triton code that cannot run is a note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_rules import COREX_OPS as OPS, HANG, SCRIPT, edit, error_rows, line_of
from tests.fixtures_vendor import SHIPPED

RULE = "no-triton-kernels"
PREFIX_RETURN = "        return PagedAttention._forward_prefix_pytorch(\n"
DECODE_START = "        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len\n"
ORIGINAL_IMPORTS = "from vllm import _custom_ops as ops\n"


def _unplaced(error: str) -> str:
    """An error without its line number: apply checks the patched file, whose lines moved."""
    where, rule, message = error.split(": ", 3)[1:]
    return f"{where.rsplit(':', 1)[0]}: {rule}: {message}"


def _fails_check_and_apply(cli, source: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """The rule's errors from ``check``; ``apply`` refuses the same input with the same errors."""
    checked = cli("check", source)
    assert checked.exit_code == 1, checked.stdout + checked.stderr
    errors = error_rows(checked.stdout)
    assert errors and all(f": {RULE}: " in e for e in errors), checked.stdout
    before = source.read_bytes()
    applied = cli("apply", source, "-o", "ctx.tar.gz")
    assert applied.exit_code == 2, applied.stderr
    assert source.read_bytes() == before  # the input is never modified
    assert not (cli.cwd / "ctx.tar.gz").exists()
    assert applied.stdout == ""
    refused = error_rows(applied.stderr)
    assert [_unplaced(e) for e in refused] == [_unplaced(e) for e in errors], applied.stderr
    assert f"nothing written: {len(errors)} safety rule error(s)" in applied.stderr
    assert "Traceback" not in applied.stderr
    return errors


# A forward_prefix that tries the Triton kernel once and falls back for good.
TRY_ONCE = """\
        from vllm.triton_utils import HAS_TRITON
        if HAS_TRITON and PagedAttention._triton_prefill_ok is not False:
            try:
                from vllm.attention.ops.prefix_prefill import context_attention_fwd
                output = torch.empty_like(query)
                context_attention_fwd(query, key, value, output, kv_cache_dtype, key_cache,
                                      value_cache, block_tables, query_start_loc, seq_lens_tensor,
                                      context_lens, max_query_len, k_scale, v_scale,
                                      alibi_slopes, sliding_window)
                PagedAttention._triton_prefill_ok = True
                return output
            except Exception as error:  # first failure: never try again
                print(f"[paged_attn] Triton prefill failed, using PyTorch: {error}")
                PagedAttention._triton_prefill_ok = False
"""


def test_triton_prefill_tried_once_with_a_fallback_is_refused(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, PREFIX_RETURN, TRY_ONCE + PREFIX_RETURN)
    edit(vendor_copy, SHIPPED, "    _PYTORCH_DECODE_THRESHOLD = 32768\n",
         "    _PYTORCH_DECODE_THRESHOLD = 32768\n    _triton_prefill_ok = None\n")
    errors = _fails_check_and_apply(cli, make_zip(vendor_copy))
    imported = line_of(vendor_copy, SHIPPED, "    from vllm.attention.ops.prefix_prefill import")
    called = line_of(vendor_copy, SHIPPED, "context_attention_fwd(query, key")
    assert errors == [
        f"error: {SHIPPED}:{imported}: {RULE}: imports context_attention_fwd from "
        f"vllm.attention.ops.prefix_prefill, under `try:` ({HANG})",
        f"error: {SHIPPED}:{called}: {RULE}: calls context_attention_fwd(...), under `try:` ({HANG})",
    ]


TRITON_V2_IMPORT = """\
try:
    from .paged_attention_v2_triton import paged_attention_v2_triton as _triton_v2_decode
    _HAS_TRITON_V2 = True
except ImportError:
    _HAS_TRITON_V2 = False
    print("[paged_attn] WARNING: Triton V2 decode not available, using PyTorch decode")
"""

TRITON_V2_CALL = """\
        if _HAS_TRITON_V2 and 8192 < int(seq_lens.max().item()) <= 100000:
            try:
                return _triton_v2_decode(query, key_cache, value_cache, block_tables, seq_lens, scale)
            except Exception:
                return PagedAttention._forward_decode_pytorch(
                    query, key_cache, value_cache, block_tables, seq_lens, scale)
"""

TRITON_MODULE = """\
import triton
import triton.language as tl


@triton.jit
def _v2_partition_kernel(out_ptr, q_ptr, k_ptr, v_ptr, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(q_ptr + offsets))


def paged_attention_v2_triton(query, key_cache, value_cache, block_tables, seq_lens, scale):
    out = query.new_empty(query.shape)
    grid = (query.shape[0], query.shape[1])
    _v2_partition_kernel[grid](out, query, key_cache, value_cache, query.stride(0), BLOCK=64)
    return out
"""


def test_triton_v2_decode_from_a_sibling_module_is_refused(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, ORIGINAL_IMPORTS, ORIGINAL_IMPORTS + "\n" + TRITON_V2_IMPORT)
    edit(vendor_copy, SHIPPED, DECODE_START, TRITON_V2_CALL + DECODE_START)
    sibling = "qwen3_6_scripts/paged_attention_v2_triton.py"
    (vendor_copy / sibling).write_text(TRITON_MODULE)
    errors = _fails_check_and_apply(cli, make_zip(vendor_copy))
    imported = line_of(vendor_copy, SHIPPED, "from .paged_attention_v2_triton import")
    called = line_of(vendor_copy, SHIPPED, "return _triton_v2_decode(")
    assert errors == [
        f"error: {sibling}:5: {RULE}: defines the Triton kernel _v2_partition_kernel (`@triton.jit`)",
        f"error: {sibling}:15: {RULE}: launches the Triton kernel _v2_partition_kernel "
        "(`_v2_partition_kernel[grid](...)`)",
        f"error: {SHIPPED}:{imported}: {RULE}: imports paged_attention_v2_triton as _triton_v2_decode from "
        f".paged_attention_v2_triton, under `try:` ({HANG})",
        f"error: {SHIPPED}:{called}: {RULE}: calls _triton_v2_decode(...), imported from "
        f".paged_attention_v2_triton, under `try:` ({HANG})",
    ]


def test_a_shipped_kernel_module_is_found_through_its_importers_whatever_its_name(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # The module's name says nothing; the install script puts it beside paged_attn.py in the image.
    (vendor_copy / "qwen3_6_scripts" / "fast_decode.py").write_text(
        TRITON_MODULE.replace("import triton\n", "import triton as tt\n").replace("@triton.jit", "@tt.jit"))
    edit(vendor_copy, SCRIPT, f"cp ./paged_attn.py {OPS}/paged_attn.py\n",
         f"cp ./paged_attn.py {OPS}/paged_attn.py\ncp ./fast_decode.py {OPS}/fast_decode.py\n")
    edit(vendor_copy, SHIPPED, ORIGINAL_IMPORTS,
         ORIGINAL_IMPORTS + "from vllm.attention.ops.fast_decode import paged_attention_v2_triton as decode\n")
    errors = _fails_check_and_apply(cli, make_zip(vendor_copy))
    line = line_of(vendor_copy, SHIPPED, "from vllm.attention.ops.fast_decode import")
    assert f"error: {SHIPPED}:{line}: {RULE}: imports vllm.attention.ops.fast_decode " \
           "(qwen3_6_scripts/fast_decode.py), which defines the Triton kernel _v2_partition_kernel" in errors
    assert "error: qwen3_6_scripts/fast_decode.py:5: no-triton-kernels: defines the Triton kernel " \
           "_v2_partition_kernel (`@tt.jit`)" in errors


@pytest.mark.parametrize("install", [
    "pip install triton==2.1.0\n",
    "TRITON_WHEEL=./triton-2.1.0-cp310-cp310-linux_x86_64.whl\npip install \"$TRITON_WHEEL\" 2>/dev/null || true\n",
    "pip3 install -U \\\n    triton\n",
    "python3 -m pip install --no-deps /tmp/wheels/triton-2.1.0+corex.3.2.1-cp310-cp310-linux_x86_64.whl\n",
])
def test_an_install_script_that_installs_triton_is_refused(cli, vendor_copy, make_zip, install) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SCRIPT, "pip install transformers==4.57.1 --no-deps\n",
         "pip install transformers==4.57.1 --no-deps\n" + install)
    errors = _fails_check_and_apply(cli, make_zip(vendor_copy))
    line = line_of(vendor_copy, SCRIPT, "transformers==4.57.1") + install.count("\n") - (
        1 if "\\\n" in install else 0)
    assert len(errors) == 1
    assert errors[0].startswith(f"error: {SCRIPT}:{line}: {RULE}: installs Triton (`"), errors


@pytest.mark.parametrize("run", [b"RUN pip install triton==2.1.0", b'RUN ["pip3", "install", "triton==2.1.0"]'])
def test_a_dockerfile_run_that_installs_triton_is_refused(cli, vendor_copy, make_zip, run) -> None:  # type: ignore[no-untyped-def]
    dockerfile = vendor_copy / "Dockerfile"
    dockerfile.write_bytes(dockerfile.read_bytes() + b"\r\n" + run + b"\r\n")
    errors = _fails_check_and_apply(cli, make_zip(vendor_copy))
    assert [e.split(": installs")[0] for e in errors] == [f"error: Dockerfile:{line_of(vendor_copy, 'Dockerfile', 'triton')}: {RULE}"]


def test_triton_code_that_cannot_run_is_a_note(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, PREFIX_RETURN,
         "        use_triton = False\n        if use_triton:\n"
         "            from vllm.attention.ops.prefix_prefill import context_attention_fwd\n" + PREFIX_RETURN)
    result = cli("check", make_zip(vendor_copy))
    assert result.exit_code == 0, result.stdout
    line = line_of(vendor_copy, SHIPPED, "    from vllm.attention.ops.prefix_prefill import")
    flag = line_of(vendor_copy, SHIPPED, "use_triton = False")
    assert f"note: {SHIPPED}:{line}: {RULE}: imports context_attention_fwd from vllm.attention.ops.prefix_prefill, " \
           f"under `if use_triton:`: cannot run: `use_triton` is always False here (line {flag})" in result.stdout
