"""verify-numerics on the vendor's own in-place write: fresh inputs each run, one warning, no false difference.

Both copies scaling an fp32 ``query`` in place leave the caller the same
bits, so it is a warning, found once per function and argument with the
dtypes it happens in; what happens when the copies write differently is in
test_written_inputs.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_prefix_case  # noqa: E402
from patcher.numerics.compare import (  # noqa: E402
    BI_V100, ArgumentWrite, Comparison, InPlaceWrite, NumericsResult, _Pair)
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_patches import VENDOR_SOURCE  # noqa: E402
from tests.numerics.conftest import load_class  # noqa: E402


WARNING = ("warning: vendor and patched forward_prefix write into `query` in place for float32 inputs "
           "(float16, bfloat16 inputs are left alone); both leave the same values")


@pytest.mark.parametrize(("dtype", "written"), [(torch.float32, True), (torch.float16, False), (torch.bfloat16, False)])
def test_the_fixture_scales_an_fp32_query_in_place_as_the_vendor_file_does(dtype, written) -> None:  # type: ignore[no-untyped-def]
    cls = load_class(VENDOR_SOURCE, StubOps(), "vendor_paged_attn")
    case = make_prefix_case([20], [6], num_kv_heads=2, gqa_ratio=3, head_dim=64, block_size=8, dtype=dtype, seed=1)
    kwargs = case.fresh_kwargs()
    cls.forward_prefix(**kwargs)
    assert torch.equal(kwargs["query"], case.kwargs["query"]) is not written
    if written:
        torch.testing.assert_close(kwargs["query"], case.kwargs["query"] * 64 ** -0.5, rtol=0, atol=1e-6)


def test_vendor_file_with_the_in_place_shape_passes_with_the_finding_printed_once(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-numerics", vendor_zip)
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(WARNING), warnings
    assert not any("DIFFERENT" in line for line in lines)
    prefix = [line for line in lines if line.startswith("forward_prefix")]
    assert len(prefix) == 1
    count = int(prefix[0].split(": ")[1].split()[0])
    tier = lines[lines.index(prefix[0]) + 1]
    assert tier.split()[:3] == ["PyTorch", "->", "PyTorch"]
    assert f" {count} case(s), {count} bitwise equal; " in tier
    # Both copies are right, not only equal: each one's error against the unpaged reference.
    errors = dict(part.split() for part in tier.split("max error vs reference (vendor/patched): ")[1].split(", "))
    assert set(errors) == {"float32", "float16", "bfloat16"}
    for dtype, bound in (("float32", 1e-5), ("float16", 4e-3), ("bfloat16", 3e-2)):
        vendor, patched = (float(x) for x in errors[dtype].split("/"))
        assert vendor == patched and 0 < vendor < bound, (dtype, errors[dtype])
    assert lines[-1] == f"result: OK: prefill bitwise equal in all {count} case(s); " + lines[-1].split("; ")[1]


def test_both_copies_writing_the_same_bits_is_no_difference() -> None:
    pair = _Pair(VENDOR_SOURCE, VENDOR_SOURCE, BI_V100, v1_limit=32768)
    case = make_prefix_case([40], [5], num_kv_heads=1, gqa_ratio=4, head_dim=64, block_size=16, seed=3)
    comparison = pair.prefix(case, "one case")
    assert comparison.ok and comparison.equal
    assert comparison.writes == (ArgumentWrite("query", True, True, True, 0.0),)
    assert comparison.written_differently == ()


def test_in_place_writes_are_aggregated_once_per_function_argument_and_way() -> None:
    def comparison(dtype: str, *writes: ArgumentWrite) -> Comparison:
        return Comparison("forward_prefix", BI_V100, "case", "PyTorch", "PyTorch", True, 0.0, 0.0,
                          dtype=dtype, writes=writes)

    both_same = ArgumentWrite("query", True, True, True)
    result = NumericsResult((comparison("float32", both_same),
                             comparison("float32", both_same),
                             comparison("float16"),
                             comparison("float32", ArgumentWrite("key", False, True, False, 0.5)),
                             comparison("bfloat16", ArgumentWrite("key", False, True, False, 2.0))), ())
    assert result.in_place_writes == (
        InPlaceWrite("forward_prefix", "query", ("vendor", "patched"), ("float32",), ("float16", "bfloat16"),
                     equal=True, cases=2, max_abs_diff=0.0),
        InPlaceWrite("forward_prefix", "key", ("patched",), ("float32", "bfloat16"), ("float16",),
                     equal=False, cases=2, max_abs_diff=2.0),
    )
    assert result.in_place_writes[0].message == ("vendor and patched forward_prefix write into `query` in place "
                                                 "for float32 inputs (float16, bfloat16 inputs are left alone)")
    assert result.in_place_writes[1].message == (
        "only patched forward_prefix writes into `key` in place, for float32, bfloat16 inputs (float16 inputs "
        "are left alone); vendor leaves it as it was, so the caller sees different `key` contents afterwards "
        "(2 case(s), max abs diff 2)")
    assert [c.ok for c in result.comparisons] == [True, True, True, False, False]
