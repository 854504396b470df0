"""verify-numerics' report, line by line: what it prints for a comparison that agrees and for one that differs.

The comparisons are written out by hand (no PyTorch run), so every line of
the report is pinned: the label, notes, the write warning, the thresholds,
one line per function and kind of ops, one per pair of tiers with each
copy's error against the reference, each case with ``--cases``, a
``DIFFERENT:`` line per failed case, a ``DIFFERENT WRITES:`` line per way
of writing, the result line and the exit code.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch")

from patcher.numerics.compare import (  # noqa: E402
    BI_V100, V2_WORKS, ArgumentWrite, Comparison, NumericsResult)
from patcher.numerics.report import NumericsReport  # noqa: E402
from patcher.report import ExitCode  # noqa: E402


LABEL = "qwen3_6_scripts/paged_attn.py of drop.zip: vendor vs patched (three-tier-decode)"
THRESHOLDS = ((8192, "a literal in forward_decode"), (9216, "PagedAttention._PYTORCH_DECODE_THRESHOLD"))
FP32 = "head_dim=128 block=16 kv_heads=2 gqa=1 float32"
FP16 = "head_dim=128 block=16 kv_heads=2 gqa=2 float16"


def prefix(case: str, dtype: str = "float32", **fields) -> Comparison:  # type: ignore[no-untyped-def]
    values = dict(equal=True, max_abs_diff=0.0, vendor_ref_error=1.3e-6, patched_ref_error=1.3e-6) | fields
    return Comparison("forward_prefix", BI_V100, case, "PyTorch", "PyTorch", values.pop("equal"),
                      values.pop("max_abs_diff"), 0.0, dtype=dtype, **values)


def decode(case: str, ops: str, vendor_tier: str, patched_tier: str, **fields) -> Comparison:  # type: ignore[no-untyped-def]
    values = dict(equal=True, max_abs_diff=0.0, tolerance=7.63e-6, vendor_ref_error=2e-7,
                  patched_ref_error=2e-7) | fields
    return Comparison("forward_decode", ops, case, vendor_tier, patched_tier, values.pop("equal"),
                      values.pop("max_abs_diff"), values.pop("tolerance"), **values)


QUERY_BOTH = ArgumentWrite("query", True, True, True)


def agreeing() -> NumericsResult:
    """Prefill bitwise equal in two dtypes (both copies scaling an fp32 query), decode on three tiers."""
    return NumericsResult((
        prefix(f"{FP32} no context", writes=(QUERY_BOTH,), vendor_ref_error=1.7e-6, patched_ref_error=1.3e-6),
        prefix(f"{FP16} one block", dtype="float16", vendor_ref_error=8.8e-4, patched_ref_error=8.8e-4),
        decode(f"{FP32} one token", BI_V100, "V1", "V1"),
        decode(f"{FP32} threshold 8192", BI_V100, "V1", "V2 failed, V1", equal=False, max_abs_diff=3e-6,
               vendor_ref_error=1e-6, patched_ref_error=3e-6),
        decode(f"{FP32} threshold 8192", V2_WORKS, "V1", "V2", equal=False, max_abs_diff=2e-6),
    ), THRESHOLDS, ("PagedAttention._PYTORCH_DECODE_THRESHOLD lowered from 32768 to 9216", "second note"))


AGREEING = [
    f"compared {LABEL}",
    "note: PagedAttention._PYTORCH_DECODE_THRESHOLD lowered from 32768 to 9216",
    "note: second note",
    "warning: vendor and patched forward_prefix write into `query` in place for float32 inputs (float16 inputs "
    "are left alone); both leave the same values, and each call got fresh copies of its inputs, so it does not "
    "affect the comparison",
    "decode thresholds crossed at T and T+1 tokens: 8192 (a literal in forward_decode), "
    "9216 (PagedAttention._PYTORCH_DECODE_THRESHOLD)",
    "forward_prefix, BI-V100 ops (V2 raises NotImplementedError): 2 case(s); vendor tier -> patched tier:",
    "  PyTorch -> PyTorch                       2 case(s), 2 bitwise equal; max error vs reference "
    "(vendor/patched): float32 1.7e-06/1.3e-06, float16 8.8e-04/8.8e-04",
    "forward_decode, BI-V100 ops (V2 raises NotImplementedError): 2 case(s); vendor tier -> patched tier:",
    "  V1 -> V1                                 1 case(s), 1 bitwise equal; max error vs reference "
    "(vendor/patched): float32 2.0e-07/2.0e-07",
    "  V1 -> V2 failed, V1                      1 case(s), 0 bitwise equal, max abs diff 3e-06 "
    "(tolerance 7.63e-06); max error vs reference (vendor/patched): float32 1.0e-06/3.0e-06",
    "forward_decode, ops with a working V2 (as on upstream GPUs): 1 case(s); vendor tier -> patched tier:",
    "  V1 -> V2                                 1 case(s), 0 bitwise equal, max abs diff 2e-06 "
    "(tolerance 7.63e-06); max error vs reference (vendor/patched): float32 2.0e-07/2.0e-07",
    "result: OK: prefill bitwise equal in all 2 case(s); decode within fp32 round-off in all 3",
]


def test_an_agreeing_comparison_prints_one_line_per_tier_and_exits_0() -> None:
    report = NumericsReport(agreeing(), LABEL)
    assert report.lines() == AGREEING
    assert report.exit_code is ExitCode.OK


def test_cases_lists_every_comparison_under_its_tier_line() -> None:
    lines = NumericsReport(agreeing(), LABEL).lines(cases=True)
    expected = list(AGREEING)
    expected.insert(7, f"    {FP32} no context: 1 case(s), 1 bitwise equal")
    expected.insert(8, f"    {FP16} one block: 1 case(s), 1 bitwise equal")
    expected.insert(11, f"    {FP32} one token: 1 case(s), 1 bitwise equal")
    expected.insert(13, f"    {FP32} threshold 8192: 1 case(s), 0 bitwise equal, max abs diff 3e-06 "
                        "(tolerance 7.63e-06)")
    expected.insert(16, f"    {FP32} threshold 8192: 1 case(s), 0 bitwise equal, max abs diff 2e-06 "
                        "(tolerance 7.63e-06)")
    assert lines == expected


def differing() -> NumericsResult:
    """A prefill one ulp off, one that only the vendor writes into, a decode that raised and one far off."""
    only_vendor = ArgumentWrite("query", True, False, False, 3.01)
    return NumericsResult((
        prefix(f"{FP32} no context", equal=False, max_abs_diff=2.5e-7, writes=(QUERY_BOTH,)),
        prefix(f"{FP32} one block", writes=(only_vendor,)),
        prefix(f"{FP32} ragged last block", equal=False, max_abs_diff=1.5e-7),
        decode(f"{FP32} one token", BI_V100, "V1", "V1"),
        decode(f"{FP32} several sequences", BI_V100, "V1", "V1", equal=False, max_abs_diff=math.inf,
               error="patched: RuntimeError: paged_attention_v1: max_seq_len=9000 exceeds the kernel's "
                     "shared memory (limit 8192)", vendor_ref_error=1e-6, patched_ref_error=math.nan),
        decode(f"{FP32} padded max_seq_len", BI_V100, "V1", "V1", equal=False, max_abs_diff=0.5,
               writes=(ArgumentWrite("key_cache", True, True, False, 2.0),),
               vendor_ref_error=4e-7, patched_ref_error=0.5),
    ), ())


DIFFERING = [
    f"compared {LABEL}",
    "warning: vendor and patched forward_prefix write into `query` in place for float32 inputs; both leave the "
    "same values, and each call got fresh copies of its inputs, so it does not affect the comparison",
    "decode thresholds crossed at T and T+1 tokens: none found",
    "forward_prefix, BI-V100 ops (V2 raises NotImplementedError): 3 case(s); vendor tier -> patched tier:",
    "  PyTorch -> PyTorch                       3 case(s), 1 bitwise equal, max abs diff 2.5e-07 (tolerance 0), "
    "1 leave different contents in their inputs; max error vs reference (vendor/patched): float32 1.3e-06/1.3e-06",
    "forward_decode, BI-V100 ops (V2 raises NotImplementedError): 3 case(s); vendor tier -> patched tier:",
    "  V1 -> V1                                 3 case(s), 1 bitwise equal, 1 raised, 1 leave different contents "
    "in their inputs; max error vs reference (vendor/patched): float32 1.0e-06/5.0e-01",
    f"DIFFERENT: forward_prefix, BI-V100 ops (V2 raises NotImplementedError), {FP32} no context: 1 case(s), "
    "0 bitwise equal, max abs diff 2.5e-07 (tolerance 0)",
    f"DIFFERENT: forward_prefix, BI-V100 ops (V2 raises NotImplementedError), {FP32} one block: only vendor "
    "writes into `query` (patched leaves it as it was), so the caller sees different `query` contents "
    "afterwards, max abs diff 3.01",
    f"DIFFERENT: forward_prefix, BI-V100 ops (V2 raises NotImplementedError), {FP32} ragged last block: "
    "1 case(s), 0 bitwise equal, max abs diff 1.5e-07 (tolerance 0)",
    f"DIFFERENT: forward_decode, BI-V100 ops (V2 raises NotImplementedError), {FP32} several sequences: "
    "patched: RuntimeError: paged_attention_v1: max_seq_len=9000 exceeds the kernel's shared memory (limit 8192)",
    f"DIFFERENT: forward_decode, BI-V100 ops (V2 raises NotImplementedError), {FP32} padded max_seq_len: "
    "1 case(s), 0 bitwise equal, max abs diff 0.5 (tolerance 7.63e-06); vendor and patched write different "
    "values into `key_cache`, max abs diff 2",
    "DIFFERENT WRITES: only vendor forward_prefix writes into `query` in place, for float32 inputs; patched "
    "leaves it as it was, so the caller sees different `query` contents afterwards (1 case(s), max abs diff 3.01)",
    "DIFFERENT WRITES: vendor and patched forward_decode write different values into `key_cache` for float32 "
    "inputs (1 case(s), max abs diff 2)",
    "result: 5 of 6 comparison(s) differ",
]


def test_a_differing_comparison_names_each_case_and_each_way_of_writing_and_exits_1() -> None:
    report = NumericsReport(differing(), LABEL)
    assert report.lines() == DIFFERING
    assert report.exit_code is ExitCode.DIFFERENCE and int(report.exit_code) == 1


def test_a_write_difference_alone_fails_the_run() -> None:
    # The outputs agree everywhere; only what one copy leaves in an input differs.
    result = NumericsResult((prefix(f"{FP32} no context", writes=(ArgumentWrite("query", False, True, False, 1.0),)),),
                            ())
    report = NumericsReport(result, LABEL)
    assert report.exit_code is ExitCode.DIFFERENCE
    assert report.lines()[-1] == "result: 1 of 1 comparison(s) differ"


@pytest.mark.parametrize(("vendor", "patched", "shown"), [
    ((math.nan, 3e-6), (2e-6, 1e-6), "float32 3.0e-06/2.0e-06"),  # a copy that raised is no error of the other
    ((math.nan, math.nan), (math.nan, 1e-6), "float32 nan/1.0e-06"),  # only when every case raised
    ((5e-6, 4e-6), (7e-6, 9e-6), "float32 5.0e-06/9.0e-06"),  # the largest, not the first or last
])
def test_each_copys_worst_reference_error_skips_cases_where_it_raised(vendor, patched, shown) -> None:  # type: ignore[no-untyped-def]
    result = NumericsResult(tuple(
        decode(f"{FP32} case {i}", BI_V100, "V1", "V1", vendor_ref_error=v, patched_ref_error=p)
        for i, (v, p) in enumerate(zip(vendor, patched))), ())
    tier = NumericsReport(result, LABEL).lines()[3]
    assert tier.endswith(f"; max error vs reference (vendor/patched): {shown}")


def test_the_worst_case_of_a_tier_gives_its_difference_and_tolerance() -> None:
    # The tier line shows the case farthest apart, with that case's own tolerance (fp16: its own eps).
    result = NumericsResult((
        decode(f"{FP16} a", BI_V100, "V1", "V2 failed, V1", equal=False, max_abs_diff=1e-4, tolerance=9.77e-4),
        decode(f"{FP32} b", BI_V100, "V1", "V2 failed, V1", equal=False, max_abs_diff=2e-6, tolerance=7.63e-6),
        decode(f"{FP32} c", BI_V100, "V1", "V2 failed, V1"),
    ), ())
    assert NumericsReport(result, LABEL).lines()[3].startswith(
        "  V1 -> V2 failed, V1                      3 case(s), 1 bitwise equal, max abs diff 0.0001 "
        "(tolerance 0.000977); ")
