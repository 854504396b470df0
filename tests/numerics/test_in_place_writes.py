"""verify-numerics on a vendor copy that writes into its input: fresh inputs each run, one warning, no false difference.

A write only one copy makes is a difference; writes both make are found
once per function and argument, with the dtypes they happen in.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_prefix_case  # noqa: E402
from patcher.numerics.compare import BI_V100, Comparison, InPlaceWrite, NumericsResult, _Pair  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_patches import VENDOR_SOURCE  # noqa: E402
from tests.numerics.conftest import load_class  # noqa: E402


WARNING = ("warning: vendor and patched forward_prefix write into `query` in place for float32 inputs "
           "(float16, bfloat16 inputs are left alone)")


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


def test_a_write_only_one_copy_makes_is_a_difference() -> None:
    # The patched copy scales a copy of the query instead: same output, different side effect.
    patched = VENDOR_SOURCE.replace(b".mul_(scale))", b".mul(scale))")
    assert patched != VENDOR_SOURCE
    pair = _Pair(VENDOR_SOURCE, patched, BI_V100, v1_limit=32768)
    case = make_prefix_case([40], [5], num_kv_heads=1, gqa_ratio=4, head_dim=64, block_size=16, seed=3)
    comparison = pair.prefix(case, "one case")
    assert comparison.equal
    assert not comparison.ok
    assert comparison.error == ("the copies write into their inputs differently: vendor into `query`, "
                                "patched into none")
    assert (comparison.vendor_writes, comparison.patched_writes) == (("query",), ())
    # In fp16 neither writes, and all is well.
    half = make_prefix_case([40], [5], num_kv_heads=1, gqa_ratio=4, head_dim=64, block_size=16,
                            dtype=torch.float16, seed=3)
    assert pair.prefix(half, "fp16").ok


def test_in_place_writes_are_aggregated_once_per_function_and_argument() -> None:
    def comparison(dtype: str, vendor: tuple[str, ...], patched: tuple[str, ...]) -> Comparison:
        return Comparison("forward_prefix", BI_V100, "case", "PyTorch", "PyTorch", True, 0.0, 0.0,
                          dtype=dtype, vendor_writes=vendor, patched_writes=patched)

    result = NumericsResult((comparison("float32", ("query",), ("query",)),
                             comparison("float32", ("query",), ("query",)),
                             comparison("float16", (), ()),
                             comparison("float32", (), ("key",))), ())
    assert result.in_place_writes == (
        InPlaceWrite("forward_prefix", "query", ("vendor", "patched"), ("float32",), ("float16",)),
        InPlaceWrite("forward_prefix", "key", ("patched",), ("float32",), ("float16",)),
    )
    assert result.in_place_writes[1].message == ("patched forward_prefix writes into `key` in place for float32 "
                                                 "inputs (float16 inputs are left alone)")
