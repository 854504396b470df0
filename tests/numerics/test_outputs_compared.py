"""How verify-numerics compares the two copies' outputs: prefill bit for bit, decode within fp32 round-off of its magnitude.

A failing copy, a missing output, or outputs of another shape or dtype
are differences that say what happened; the comparison of bits sees
``-0.0`` and NaN payloads; each copy's error against the reference
ignores a copy that gave nothing to measure.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics import compare  # noqa: E402
from patcher.numerics.compare import (  # noqa: E402
    BI_V100, FP32_TOLERANCE, V2_WORKS, Comparison, _compare, _max_abs_diff, _ref_error, _same_bits)


def out(tensor, tier: str = "V1", error: str | None = None):  # type: ignore[no-untyped-def]
    """One copy's result as ``_Side.run`` returns it."""
    return tensor, tier, error


def up(tensor: torch.Tensor, index: int = 0, ulps: int = 1) -> torch.Tensor:
    """TENSOR with one element moved up by ULPS units in the last place of its own dtype."""
    moved = tensor.clone()
    flat = moved.view(-1)
    for _ in range(ulps):
        flat[index] = torch.nextafter(flat[index:index + 1], torch.tensor([math.inf], dtype=tensor.dtype))[0]
    return moved


def decode_output(magnitude: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A decode output ``[2 seqs, 4 heads, 8]`` whose largest absolute value is MAGNITUDE, held by a negative element."""
    values = torch.linspace(-0.5, 0.5, 64).reshape(2, 4, 8)
    values[1, 2, 3] = -magnitude
    return values.to(dtype)


def test_fp32_tolerance_is_64_units_of_round_off() -> None:
    assert FP32_TOLERANCE == 64 * 2.0 ** -23


def test_prefill_passes_only_when_bitwise_equal() -> None:
    vendor = decode_output(1.0)
    same = _compare("forward_prefix", BI_V100, "case", [out(vendor, "PyTorch"), out(vendor.clone(), "PyTorch")], 0.0)
    assert same == Comparison("forward_prefix", BI_V100, "case", "PyTorch", "PyTorch", True, 0.0, 0.0)
    assert same.outputs_ok and same.ok
    moved = up(vendor, index=5)
    one_ulp = float(moved.view(-1)[5] - vendor.view(-1)[5])
    off = _compare("forward_prefix", BI_V100, "case", [out(vendor, "PyTorch"), out(moved, "PyTorch")], 0.0)
    assert off == Comparison("forward_prefix", BI_V100, "case", "PyTorch", "PyTorch", False, one_ulp, 0.0)
    assert not off.outputs_ok and not off.ok


@pytest.mark.parametrize("magnitude", [0.25, 1.0, 10.0, 300.0])
def test_decode_passes_within_fp32_round_off_of_the_outputs_magnitude(magnitude: float) -> None:
    vendor = decode_output(magnitude)
    allowed = FP32_TOLERANCE * max(1.0, magnitude)  # below magnitude 1, round-off is measured against 1
    compared = _compare("forward_decode", BI_V100, "case", [out(vendor, "V1"), out(vendor, "V2 failed, V1")],
                        FP32_TOLERANCE)
    assert compared.equal and compared.max_abs_diff == 0.0 and compared.tolerance == allowed
    assert compared.vendor_tier == "V1" and compared.patched_tier == "V2 failed, V1"
    # A difference of exactly the tolerance passes; the next representable one does not.
    at = vendor.clone()
    at[0, 0, 0] += allowed
    assert float(at[0, 0, 0]) - float(vendor[0, 0, 0]) == allowed
    inside = _compare("forward_decode", BI_V100, "case", [out(vendor), out(at)], FP32_TOLERANCE)
    assert not inside.equal and inside.max_abs_diff == allowed and inside.outputs_ok
    past = up(at)
    outside = _compare("forward_decode", BI_V100, "case", [out(vendor), out(past)], FP32_TOLERANCE)
    assert outside.max_abs_diff > allowed and not outside.outputs_ok and not outside.ok


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_decode_may_differ_by_its_own_last_bit(dtype: torch.dtype) -> None:
    vendor = decode_output(4.0, dtype)
    eps = torch.finfo(dtype).eps
    compared = _compare("forward_decode", V2_WORKS, "case", [out(vendor), out(vendor)], FP32_TOLERANCE)
    assert compared.tolerance == eps * 4.0
    # One ulp of the largest element: within; the same move on a small element is too.
    assert _compare("forward_decode", V2_WORKS, "case", [out(vendor), out(up(vendor, index=43))],
                    FP32_TOLERANCE).outputs_ok
    far = vendor.clone()
    far[0, 0, 0] += 8 * eps * 4.0
    assert not _compare("forward_decode", V2_WORKS, "case", [out(vendor), out(far)], FP32_TOLERANCE).outputs_ok
    # Prefill stays bitwise in every dtype.
    prefill = _compare("forward_prefix", BI_V100, "case", [out(vendor), out(up(vendor))], 0.0)
    assert prefill.tolerance == 0.0 and not prefill.outputs_ok


def test_empty_outputs_are_equal_and_measured_against_one() -> None:
    empty = torch.empty(0, 4, 8)
    compared = _compare("forward_decode", BI_V100, "case", [out(empty), out(empty.clone())], FP32_TOLERANCE)
    assert compared.equal and compared.max_abs_diff == 0.0 and compared.tolerance == FP32_TOLERANCE
    assert compared.ok


def test_a_copy_that_raises_is_a_difference_with_its_message() -> None:
    vendor = decode_output(1.0)
    message = "patched: NotImplementedError: paged_attention_v2 is not available on BI-V100"
    compared = _compare("forward_decode", BI_V100, "case", [out(vendor, "V1"), out(None, "V2", message)],
                        FP32_TOLERANCE)
    assert compared == Comparison("forward_decode", BI_V100, "case", "V1", "V2", False, math.inf, FP32_TOLERANCE,
                                  message)
    assert not compared.outputs_ok
    both = _compare("forward_decode", BI_V100, "case",
                    [out(None, "V1", "vendor: RuntimeError: first"), out(None, "V1", "patched: RuntimeError: second")],
                    FP32_TOLERANCE)
    assert both.error == "vendor: RuntimeError: first"  # the vendor's, as the report shows one


@pytest.mark.parametrize("missing", [0, 1])
def test_a_copy_that_returns_nothing_is_a_difference(missing: int) -> None:
    results = [out(decode_output(1.0)), out(decode_output(1.0))]
    results[missing] = out(None)
    compared = _compare("forward_prefix", BI_V100, "case", results, 0.0)
    assert compared.error == "no output" and not compared.equal and compared.max_abs_diff == math.inf
    assert not compared.ok


def test_outputs_of_another_shape_or_dtype_are_a_difference_saying_both() -> None:
    vendor = torch.zeros(2, 4, 8)
    shape = _compare("forward_prefix", BI_V100, "ctx=48 q=16", [out(vendor), out(torch.zeros(2, 8, 4), "V2")], 0.0)
    assert shape == Comparison("forward_prefix", BI_V100, "ctx=48 q=16", "V1", "V2", False, math.inf, 0.0,
                               "vendor gives (2, 4, 8) torch.float32, patched (2, 8, 4) torch.float32")
    dtype = _compare("forward_prefix", BI_V100, "case", [out(vendor), out(vendor.half())], 0.0)
    assert dtype.error == "vendor gives (2, 4, 8) torch.float32, patched (2, 4, 8) torch.float16"
    assert not dtype.ok


# -- bit for bit ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_signed_zeros_differ_and_a_nan_equals_its_own_bits(dtype: torch.dtype) -> None:
    zeros = torch.zeros(3, dtype=dtype)
    assert _same_bits(zeros, zeros.clone())
    assert not _same_bits(zeros, -zeros)
    nans = torch.full((3,), math.nan, dtype=dtype)
    assert _same_bits(nans, nans.clone())
    payload = nans.clone()
    payload.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[payload.element_size()])[1] += 1
    assert math.isnan(float(payload[1])) and not _same_bits(nans, payload)  # another NaN's bits
    assert not _same_bits(nans, zeros)


def test_complex_tensors_are_compared_bit_for_bit_too() -> None:
    for dtype in (torch.complex64, torch.complex128):
        value = torch.tensor([complex(0.0, 1.0), complex(math.nan, 2.0)], dtype=dtype)
        assert _same_bits(value, value.clone())
        assert not _same_bits(value, torch.tensor([complex(-0.0, 1.0), complex(math.nan, 2.0)], dtype=dtype))


def test_other_shapes_or_dtypes_never_hold_the_same_bits() -> None:
    assert not _same_bits(torch.zeros(4), torch.zeros(2, 2))
    assert not _same_bits(torch.zeros(4), torch.zeros(4, dtype=torch.int32))  # the same bytes, another dtype
    assert not _same_bits(torch.zeros(4, dtype=torch.int32), torch.zeros(4))
    assert _same_bits(torch.arange(4, dtype=torch.int32), torch.arange(4, dtype=torch.int32))
    assert not _same_bits(torch.arange(4, dtype=torch.int32), torch.arange(1, 5, dtype=torch.int32))
    assert _same_bits(torch.tensor([True, False]), torch.tensor([True, False]))
    assert not _same_bits(torch.tensor([True, False]), torch.tensor([True, True]))


def test_the_largest_difference_is_measured_in_double_precision() -> None:
    a = torch.tensor([1.0, -3.0, 2.0])
    assert _max_abs_diff(a, torch.tensor([1.0, 1.0, 2.5])) == 4.0
    assert _max_abs_diff(a, torch.zeros(2)) == math.inf
    assert _max_abs_diff(torch.empty(0, 3), torch.empty(0, 3)) == 0.0
    assert math.isnan(_max_abs_diff(a, torch.tensor([1.0, math.nan, 2.0])))
    # int64 values past 2**24 keep their exact difference (float32 would round it to 0).
    big = torch.tensor([2 ** 40], dtype=torch.int64)
    assert _max_abs_diff(big, big + 1) == 1.0


def test_the_error_against_the_reference_is_nan_when_there_is_nothing_to_measure() -> None:
    reference = torch.tensor([[0.5, -0.25]])
    assert _ref_error(torch.tensor([[0.5, 0.25]]), reference) == 0.5
    assert _ref_error(torch.tensor([[0.5, -0.25]], dtype=torch.float16), reference) == 0.0
    assert math.isnan(_ref_error(None, reference))
    assert math.isnan(_ref_error(torch.zeros(2, 1), reference))
    assert _ref_error(torch.empty(0, 2), torch.empty(0, 2)) == 0.0

