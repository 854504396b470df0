"""Which tier verify-numerics says each copy ran, per call, and what it says when a copy raises.

The tier comes from the stub ops' call counts and the PyTorch fallbacks'
calls during that one call: V1, V2, V2 failed then V1, V1 after V2 was
marked unavailable, PyTorch, or none (prefill: PyTorch or other). The
thresholds are moved down (the class threshold set, the 8192 literal
replaced) so that every tier runs on a few hundred tokens.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_decode_case, make_prefix_case  # noqa: E402
from patcher.numerics.compare import BI_V100, FP32_TOLERANCE, V2_WORKS, _Pair  # noqa: E402

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402


def three_tiers_at(v2_from: int, source: bytes | None = None) -> bytes:
    """The patched copy with its V2 tier starting past V2_FROM tokens instead of 8192."""
    source = PATCHED.read_bytes() if source is None else source
    old = b"use_v2 = actual_max > 8192 and"
    assert source.count(old) == 1
    return source.replace(old, f"use_v2 = actual_max > {v2_from} and".encode())


def small_pair(mode: str = BI_V100, v1_limit: int = 32768) -> _Pair:
    """Vendor and patched, with V2 past 64 tokens and PyTorch past 128, on both copies."""
    pair = _Pair(VENDOR_SOURCE, three_tiers_at(64), mode, v1_limit)
    pair.set_threshold(128)
    return pair


def decode(*lengths: int, dtype: torch.dtype = torch.float32):  # type: ignore[no-untyped-def]
    return make_decode_case(list(lengths), num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=16, dtype=dtype,
                            seed=sum(lengths))


def tiers(pair: _Pair, *lengths: int) -> tuple[str, str]:
    comparison = pair.decode(decode(*lengths), f"lengths {list(lengths)}")
    assert comparison.ok, comparison
    assert (comparison.function, comparison.ops, comparison.case) == ("forward_decode", pair.ops_mode,
                                                                      f"lengths {list(lengths)}")
    return comparison.vendor_tier, comparison.patched_tier


def test_on_bi_v100_ops_v2_is_tried_once_then_v1_is_named_as_chosen_for_that_reason() -> None:
    pair = small_pair()
    assert tiers(pair, 5, 64) == ("V1", "V1")
    assert tiers(pair, 5, 65) == ("V1", "V2 failed, V1")
    assert tiers(pair, 5, 65) == ("V1", "V1 (V2 marked unavailable)")
    assert tiers(pair, 5, 128) == ("V1", "V1 (V2 marked unavailable)")
    assert tiers(pair, 5, 129) == ("PyTorch", "PyTorch")
    assert tiers(pair, 5, 64) == ("V1", "V1 (V2 marked unavailable)")  # the counts are per call


def test_with_a_working_v2_the_middle_tier_is_v2() -> None:
    pair = small_pair(V2_WORKS)
    assert tiers(pair, 5, 129) == ("PyTorch", "PyTorch")  # a PyTorch call is forgotten by the next call
    assert tiers(pair, 65, 5) == ("V1", "V2")
    assert tiers(pair, 5, 128) == ("V1", "V2")
    assert tiers(pair, 5, 64) == ("V1", "V1")  # so is a V2 call


def test_prefill_runs_the_pytorch_fallback_on_both_copies() -> None:
    pair = small_pair()
    case = make_prefix_case([20], [3], num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=16, seed=2)
    comparison = pair.prefix(case, "prefill")
    assert (comparison.vendor_tier, comparison.patched_tier) == ("PyTorch", "PyTorch")
    assert comparison.function == "forward_prefix" and comparison.ops == BI_V100 and comparison.case == "prefill"
    assert comparison.tolerance == 0.0 and comparison.ok


# A patched copy stubbed out in a hurry: no kernel, no fallback, the right shape, zeros.
STUBBED_OUT = b'''import torch
from vllm import _custom_ops as ops


class PagedAttention:

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len, kv_cache_dtype,
                       num_kv_heads, scale, alibi_slopes, k_scale, v_scale):
        return torch.zeros_like(query)

    @staticmethod
    def forward_prefix(query, key, value, kv_cache_dtype, key_cache, value_cache, block_tables, query_start_loc,
                       seq_lens_tensor, context_lens, max_query_len, alibi_slopes, sliding_window, k_scale, v_scale):
        return torch.zeros_like(query)
'''


def test_a_copy_that_calls_no_kernel_and_no_fallback_ran_none_or_other() -> None:
    pair = _Pair(VENDOR_SOURCE, STUBBED_OUT, BI_V100, 32768)
    assert pair.threshold(1) is None
    decoded = pair.decode(decode(5, 40), "decode")
    assert (decoded.vendor_tier, decoded.patched_tier) == ("V1", "none")
    assert not decoded.equal and not decoded.ok
    prefill = pair.prefix(make_prefix_case([20], [3], num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=16),
                          "prefill")
    assert (prefill.vendor_tier, prefill.patched_tier) == ("PyTorch", "other")
    assert not prefill.ok


def test_a_copy_that_raises_is_named_with_the_exception_and_its_tier() -> None:
    # The card's V1 fails past its limit; here the limit is 64 tokens.
    pair = small_pair(v1_limit=64)
    comparison = pair.decode(decode(5, 100), "decode")
    assert comparison.error == ("vendor: RuntimeError: paged_attention_v1: max_seq_len=100 exceeds the kernel's "
                                "shared memory (limit 64)")
    assert (comparison.vendor_tier, comparison.patched_tier) == ("V1", "V2 failed, V1")
    assert comparison.vendor_ref_error != comparison.vendor_ref_error  # nan: nothing to measure
    assert comparison.patched_ref_error != comparison.patched_ref_error
    assert not comparison.ok
    # Within the limit both run.
    assert small_pair(v1_limit=64).decode(decode(5, 64), "decode").ok


def test_each_call_is_measured_against_the_reference_in_its_dtype() -> None:
    pair = small_pair()
    case = decode(5, 40, dtype=torch.bfloat16)
    comparison = pair.decode(case, "decode")
    scale = max(1.0, float(case.reference().abs().max()))
    assert comparison.dtype == "bfloat16"
    assert comparison.tolerance == pytest.approx(torch.finfo(torch.bfloat16).eps * scale, rel=0.01)
    assert 0 < comparison.vendor_ref_error == comparison.patched_ref_error < 2e-2
    fp32 = pair.decode(decode(5, 40), "decode")
    assert fp32.dtype == "float32" and FP32_TOLERANCE <= fp32.tolerance < 2 * FP32_TOLERANCE * scale
    assert fp32.vendor_ref_error < 1e-5 and fp32.writes == ()


def test_each_copy_is_its_own_module_with_its_own_ops() -> None:
    pair = _Pair(VENDOR_SOURCE, PATCHED.read_bytes(), V2_WORKS, 4096)
    vendor, patched = pair.sides
    assert (vendor.name, patched.name) == ("vendor", "patched")
    assert (vendor.module.__name__, patched.module.__name__) == ("paged_attn_vendor", "paged_attn_patched")
    assert (vendor.module.__file__, patched.module.__file__) == ("<vendor paged_attn.py>", "<patched paged_attn.py>")
    assert vendor.module.ops is vendor.ops and patched.module.ops is patched.ops and vendor.ops is not patched.ops
    assert all(side.ops.v2_available and side.ops.v1_max_seq_len == 4096 for side in pair.sides)
    assert not any(side.ops.v2_available for side in _Pair(VENDOR_SOURCE, VENDOR_SOURCE, BI_V100, 1).sides)
    pair.set_threshold(300)
    assert vendor.cls._PYTORCH_DECODE_THRESHOLD == patched.cls._PYTORCH_DECODE_THRESHOLD == 300


def test_the_fallback_counter_passes_arguments_and_result_through() -> None:
    pair = small_pair()
    vendor = pair.sides[0]
    case = decode(5, 40)
    expected = vendor.cls._forward_decode_pytorch(**case.pytorch_kwargs())
    assert vendor.pytorch_calls == 1
    torch.testing.assert_close(expected, case.reference(), rtol=0, atol=1e-5)
