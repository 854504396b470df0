"""What verify-numerics reports about the tensors a copy writes into: compared bit for bit, after each copy.

A caller sees the output and every tensor it passed in. Both copies leaving
the same bits in an input is a warning (test_in_place_writes.py); a write
only one copy makes, or two different writes, leaves the caller with
different contents: a difference naming the input, the copy, the dtypes
and the max abs diff between what each copy left.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics import compare  # noqa: E402
from patcher.numerics.cases import fresh_copies, make_decode_case, make_prefix_case  # noqa: E402
from patcher.numerics.compare import BI_V100, ArgumentWrite, InPlaceWrite, NumericsResult, _Pair  # noqa: E402

from tests.fixtures_patches import VENDOR_SOURCE, add_patch, copy_patch_set, patch_toml, replace_step  # noqa: E402


# -- hostile copies, as a hurried engineer would write them -------------------------------------


def scaling_a_copy(source: bytes) -> bytes:
    """The vendor's prefill with its in-place write "fixed": it scales a copy of the query (fp32 too)."""
    assert source.count(b".mul_(scale))") == 1
    return source.replace(b".mul_(scale))", b".mul(scale))")


def reusing_query_for_the_output(source: bytes) -> bytes:
    """The vendor's prefill writing its output into the caller's ``query`` to save a buffer.

    Each sequence reads its slice of ``query`` before writing its output
    there, so the output is bit for bit the vendor's; the caller's query
    is gone, in every dtype.
    """
    old = b"output       = torch.empty_like(query)"
    assert source.count(old) == 1
    return source.replace(old, b"output       = query")


def writing_into_seq_lens(source: bytes) -> bytes:
    """The vendor's decode clamping the caller's ``seq_lens`` in place (an int32 tensor) before it reads them."""
    old = b"        actual_max = int(seq_lens.max().item())"
    assert source.count(old) == 1
    return source.replace(old, b"        seq_lens.clamp_(max=64)\n" + old)


def scale_a_copy_patch_set(folder: Path) -> Path:
    """The shipped patch set and one more patch that makes the patched prefill scale a copy of the query."""
    return add_patch(copy_patch_set(folder), "prefix-scale-a-copy", patch_toml(
        "prefix-scale-a-copy", replace_step(
            "q_seq = q_i.permute(1, 0, 2).float().view(num_kv_heads, gqa_ratio, q_len, head_dim).mul_(scale)",
            "q_seq = q_i.permute(1, 0, 2).float().view(num_kv_heads, gqa_ratio, q_len, head_dim).mul(scale)"),
        scope="PagedAttention._forward_prefix_pytorch", target="vllm/attention/ops/paged_attn.py",
        description="Scale a copy of the query, never the caller's (a test of verify-numerics)",
        last_update="2026-12-01"))


def _prefix(dtype: torch.dtype, seed: int = 3):  # type: ignore[no-untyped-def]
    return make_prefix_case([40, 0], [5, 3], num_kv_heads=1, gqa_ratio=4, head_dim=64, block_size=16,
                            dtype=dtype, seed=seed)


def _left_by(source: bytes, function: str, case, name: str) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """What one copy leaves in argument NAME, run on its own."""
    kwargs = case.fresh_kwargs()
    getattr(_Pair(source, source, BI_V100, 32768).sides[0].cls, function)(**kwargs)
    return kwargs[name]


# -- one call -------------------------------------------------------------------------------------


def test_a_write_only_the_vendor_makes_is_a_difference_naming_input_copy_and_diff() -> None:
    patched = scaling_a_copy(VENDOR_SOURCE)
    pair = _Pair(VENDOR_SOURCE, patched, BI_V100, v1_limit=32768)
    case = _prefix(torch.float32)
    comparison = pair.prefix(case, "fp32")
    assert comparison.equal and comparison.outputs_ok  # the same output...
    assert not comparison.ok  # ...but not the same query afterwards
    left = _left_by(VENDOR_SOURCE, "forward_prefix", case, "query")
    diff = float((left.double() - case.kwargs["query"].double()).abs().max())
    assert diff > 0.5  # the query scaled by 1/8, not round-off
    assert comparison.writes == (ArgumentWrite("query", True, False, False, diff),)
    assert comparison.writes[0].message == (
        f"only vendor writes into `query` (patched leaves it as it was), so the caller sees different `query` "
        f"contents afterwards, max abs diff {diff:.3g}")
    # In fp16 neither copy writes: nothing to report.
    half = pair.prefix(_prefix(torch.float16), "fp16")
    assert half.ok and half.writes == ()


def test_query_reused_as_the_output_is_two_different_writes_in_fp32_and_one_in_half() -> None:
    patched = reusing_query_for_the_output(VENDOR_SOURCE)
    pair = _Pair(VENDOR_SOURCE, patched, BI_V100, v1_limit=32768)
    fp32, bf16 = _prefix(torch.float32), _prefix(torch.bfloat16)
    comparisons = [pair.prefix(fp32, "fp32"), pair.prefix(bf16, "bf16")]
    assert all(c.equal and c.outputs_ok and not c.ok for c in comparisons)

    vendor_left = _left_by(VENDOR_SOURCE, "forward_prefix", fp32, "query")
    patched_left = _left_by(patched, "forward_prefix", fp32, "query")
    both = float((vendor_left.double() - patched_left.double()).abs().max())
    assert comparisons[0].writes == (ArgumentWrite("query", True, True, False, both),)
    assert comparisons[0].writes[0].message == (
        f"vendor and patched write different values into `query`, max abs diff {both:.3g}")

    patched_left = _left_by(patched, "forward_prefix", bf16, "query")
    one = float((patched_left.double() - bf16.kwargs["query"].double()).abs().max())
    assert comparisons[1].writes == (ArgumentWrite("query", False, True, False, one),)

    # Aggregated: each way once, with its dtypes; the dtypes where no copy wrote are named too.
    half = pair.prefix(_prefix(torch.float16), "fp16")
    result = NumericsResult((*comparisons, half), ())
    assert result.in_place_writes == (
        InPlaceWrite("forward_prefix", "query", ("vendor", "patched"), ("float32",), (), equal=False, cases=1,
                     max_abs_diff=both),
        InPlaceWrite("forward_prefix", "query", ("patched",), ("bfloat16", "float16"), (), equal=False, cases=2,
                     max_abs_diff=max(one, half.writes[0].max_abs_diff)),
    )
    assert result.in_place_writes[0].message.startswith(
        "vendor and patched forward_prefix write different values into `query` for float32 inputs (1 case(s), ")


def test_an_integer_input_written_by_one_copy_is_a_difference() -> None:
    patched = writing_into_seq_lens(VENDOR_SOURCE)
    pair = _Pair(VENDOR_SOURCE, patched, BI_V100, v1_limit=32768)
    case = make_decode_case([100, 30], num_kv_heads=1, gqa_ratio=2, head_dim=64, seed=4)
    comparison = pair.decode(case, "decode")
    assert not comparison.ok
    assert comparison.writes == (ArgumentWrite("seq_lens", False, True, False, 36.0),)
    assert comparison.patched_writes == ("seq_lens",) and comparison.vendor_writes == ()


# -- bit for bit --------------------------------------------------------------------------------


def signed_zero_and_nan_inputs() -> dict[str, torch.Tensor]:
    """Inputs whose values compare equal with == while their bits differ, or differ while their bits agree."""
    return {"zeros": torch.zeros(4), "nans": torch.full((4,), float("nan")), "ints": torch.arange(4)}


def test_writes_are_found_bit_for_bit_not_by_equality() -> None:
    before = signed_zero_and_nan_inputs()
    vendor, patched = fresh_copies(before), fresh_copies(before)
    vendor["zeros"].neg_()  # -0.0 == 0.0, yet the caller holds other bits
    patched["nans"].mul_(2)  # NaN != NaN, yet the bits stay the same: no write
    vendor["ints"][1] = 7
    patched["ints"][1] = 7  # both write the same value: equal
    writes = compare._writes(before, vendor, patched)
    assert writes == (ArgumentWrite("zeros", True, False, False, 0.0), ArgumentWrite("ints", True, True, True, 0.0))


def test_writes_after_non_tensor_arguments_are_found_in_every_tensor() -> None:
    # forward_prefix's arguments in the order a caller passes them: strings, numbers and None among the tensors.
    before = _prefix(torch.float32).kwargs
    vendor, patched = fresh_copies(before), fresh_copies(before)
    assert list(before)[3] == "kv_cache_dtype" and before["alibi_slopes"] is None
    vendor["value_cache"][0, 0, 0, 0] += 1.0  # after kv_cache_dtype, a string
    patched["context_lens"][0] -= 1  # after seq_lens_tensor; max_query_len and the Nones follow
    vendor["k_scale"] = 2.0  # a float a copy rebinds is not the caller's: nothing to see
    assert compare._writes(before, vendor, patched) == (ArgumentWrite("value_cache", True, False, False, 1.0),
                                                        ArgumentWrite("context_lens", False, True, False, 1.0))


def test_each_way_of_writing_is_said_in_one_sentence() -> None:
    only_patched = ArgumentWrite("key_cache", False, True, False, 0.25)
    assert only_patched.sides == ("patched",)
    assert only_patched.message == ("only patched writes into `key_cache` (vendor leaves it as it was), so the caller "
                                    "sees different `key_cache` contents afterwards, max abs diff 0.25")
    assert ArgumentWrite("query", True, True, True).sides == ("vendor", "patched")
    assert ArgumentWrite("query", True, True, True).message == "vendor and patched write the same values into `query`"
    assert InPlaceWrite("forward_decode", "key_cache", ("patched",), ("float32", "float16"), ("bfloat16",),
                        equal=False, cases=3, max_abs_diff=0.25).message == (
        "only patched forward_decode writes into `key_cache` in place, for float32, float16 inputs (bfloat16 inputs "
        "are left alone); vendor leaves it as it was, so the caller sees different `key_cache` contents afterwards "
        "(3 case(s), max abs diff 0.25)")
    assert InPlaceWrite("forward_decode", "key_cache", ("vendor", "patched"), ("float32",), ("float16", "bfloat16"),
                        equal=False, cases=1, max_abs_diff=1e-3).message == (
        "vendor and patched forward_decode write different values into `key_cache` for float32 inputs (float16, "
        "bfloat16 inputs are left alone) (1 case(s), max abs diff 0.001)")
    # One copy alone cannot leave "the same values" as the other, but the sentence still reads right.
    assert InPlaceWrite("forward_prefix", "query", ("vendor",), ("float32",), ()).message == (
        "vendor forward_prefix writes into `query` in place for float32 inputs")


def test_a_nan_left_by_either_copy_is_the_largest_difference_of_its_way() -> None:
    def comparison(dtype: str, diff: float) -> compare.Comparison:
        return compare.Comparison("forward_prefix", BI_V100, "case", "PyTorch", "PyTorch", True, 0.0, 0.0,
                                  dtype=dtype, writes=(ArgumentWrite("query", True, False, False, diff),))

    result = NumericsResult((comparison("float32", 0.5), comparison("float16", float("nan")),
                             comparison("bfloat16", 2.0)), ())
    (write,) = result.in_place_writes
    assert write.cases == 3 and write.dtypes == ("float32", "float16", "bfloat16") and write.untouched == ()
    assert write.max_abs_diff != write.max_abs_diff  # nan
    assert write.message.endswith("(3 case(s), max abs diff nan)")


# -- the command --------------------------------------------------------------------------------


def test_the_command_reports_a_write_only_the_vendor_makes_and_exits_1(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-numerics", vendor_zip, "--patches", scale_a_copy_patch_set(tmp_path / "set"))
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    fp32_prefill = [p.label for p in compare._prefix_grid() if " float32 " in p.label]
    different = [line for line in lines if line.startswith("DIFFERENT: ")]
    assert [line.split(", ", 2)[2].split(": only vendor")[0] for line in different] == fp32_prefill
    assert all(line.split(": ")[-1].startswith("only vendor writes into `query` (patched leaves it as it was), so "
                                               "the caller sees different `query` contents afterwards, max abs diff ")
               for line in different)
    summary = [line for line in lines if line.startswith("DIFFERENT WRITES: ")]
    assert len(summary) == 1
    assert summary[0].startswith(
        "DIFFERENT WRITES: only vendor forward_prefix writes into `query` in place, for float32 inputs (float16, "
        "bfloat16 inputs are left alone); patched leaves it as it was, so the caller sees different `query` "
        f"contents afterwards ({len(fp32_prefill)} case(s), max abs diff ")
    assert not any(line.startswith("warning:") for line in lines)
    assert f"61 case(s), 61 bitwise equal, {len(fp32_prefill)} leave different contents in their inputs" in result.stdout
    assert lines[-1] == f"result: {len(fp32_prefill)} of 158 comparison(s) differ"
