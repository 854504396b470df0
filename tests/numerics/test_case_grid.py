"""The grid verify-numerics runs: which cases, in which order, on which ops, and what each is built from.

158 calls: 61 prefills on BI-V100 ops, 78 decodes on BI-V100 ops and 19 on
ops with a working V2, over head sizes 128/256, block sizes 16/32, GQA
1/2/6 and fp32/fp16/bf16, with T and T+1 tokens around each decode
threshold; each case is labelled with what it holds, and built from its
own seed.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics import compare  # noqa: E402
from patcher.numerics.cases import DecodeCase, PrefixCase  # noqa: E402
from patcher.numerics.compare import (  # noqa: E402
    BI_V100, LONG_CONTEXT, SHAPES, V2_WORKS, ArgumentWrite, Shape, compare_sources)

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402


THRESHOLDS = ((8192, "a literal in forward_decode"), (9216, "PagedAttention._PYTORCH_DECODE_THRESHOLD"))


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    """One comparison of the fixture's vendor and patched copies, with what progress saw while it ran."""
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total, torch.get_num_threads()))
        assert seen[-1][2] == 1, "more than one thread: each call costs several times the CPU"

    before = torch.get_num_threads()
    result = compare_sources(VENDOR_SOURCE, PATCHED.read_bytes(), progress=progress)
    return {"result": result, "progress": seen, "threads": (before, torch.get_num_threads())}


def test_every_call_of_the_grid_agrees_on_the_fixture(run: dict[str, Any]) -> None:
    result = run["result"]
    assert len(result.comparisons) == 158 and result.failed == ()
    counts = collections.Counter((c.function, c.ops) for c in result.comparisons)
    assert list(counts.items()) == [(("forward_prefix", BI_V100), 61), (("forward_decode", BI_V100), 78),
                                    (("forward_decode", V2_WORKS), 19)]
    assert result.thresholds == THRESHOLDS
    assert result.notes == ("PagedAttention._PYTORCH_DECODE_THRESHOLD lowered from 32768 to 9216 on both copies "
                            "to keep CPU time low (--full-thresholds keeps it); every tier boundary is still crossed",)
    assert all(c.tolerance == 0 and c.equal for c in result.comparisons if c.function == "forward_prefix")
    assert all(c.tolerance > 0 for c in result.comparisons if c.function == "forward_decode")


def test_the_comparisons_come_in_the_grids_order_prefill_first(run: dict[str, Any]) -> None:
    result = run["result"]
    prefill = [p.label for p in compare._prefix_grid()]
    decode = list(compare._decode_grid(THRESHOLDS))
    expected = ([("forward_prefix", BI_V100, label) for label in prefill]
                + [("forward_decode", BI_V100, p.label) for p in decode]
                + [("forward_decode", V2_WORKS, p.label) for p in decode if V2_WORKS in p.modes])
    assert [(c.function, c.ops, c.case) for c in result.comparisons] == expected


def test_progress_counts_each_call_on_one_thread_and_the_callers_threads_come_back(run: dict[str, Any]) -> None:
    assert run["progress"] == [(done, 158, 1) for done in range(1, 159)]
    before, after = run["threads"]
    assert after == before


def test_the_callers_thread_count_comes_back_after_an_error() -> None:
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="inside"):
        with compare._threads(before + 1):
            assert torch.get_num_threads() == before + 1
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before


def test_decode_crosses_each_threshold_on_every_tier(run: dict[str, Any]) -> None:
    tiers = {(c.ops, c.case.split("threshold ")[1].split(" (")[0], c.case.split("lengths [5, ")[1][:-1],
              c.case.split()[0]): (c.vendor_tier, c.patched_tier)
             for c in run["result"].comparisons if "threshold" in c.case}
    bi, v2 = "V1", "V1 (V2 marked unavailable)"
    assert tiers == {
        (BI_V100, "8192", "8192", "head_dim=128"): (bi, "V1"),
        (BI_V100, "8192", "8193", "head_dim=128"): (bi, "V2 failed, V1"),
        (BI_V100, "9216", "9216", "head_dim=128"): (bi, v2),
        (BI_V100, "9216", "9217", "head_dim=128"): ("PyTorch", "PyTorch"),
        (BI_V100, "8192", "8192", "head_dim=256"): (bi, v2),  # marked unavailable by the 128 case above
        (BI_V100, "8192", "8193", "head_dim=256"): (bi, v2),
        (BI_V100, "9216", "9216", "head_dim=256"): (bi, v2),
        (BI_V100, "9216", "9217", "head_dim=256"): ("PyTorch", "PyTorch"),
        # The lowered threshold holds on the ops with a working V2 too.
        (V2_WORKS, "8192", "8192", "head_dim=128"): (bi, "V1"),
        (V2_WORKS, "8192", "8193", "head_dim=128"): (bi, "V2"),
        (V2_WORKS, "9216", "9216", "head_dim=128"): (bi, "V2"),
        (V2_WORKS, "9216", "9217", "head_dim=128"): ("PyTorch", "PyTorch"),
    }


def test_fp32_prefill_is_where_both_copies_write_into_query(run: dict[str, Any]) -> None:
    for c in run["result"].comparisons:
        expected = (ArgumentWrite("query", True, True, True),) if (c.function, c.dtype) == ("forward_prefix",
                                                                                             "float32") else ()
        assert c.writes == expected, c.case


# -- what the grid holds --------------------------------------------------------------------------------


def test_the_shapes_cover_both_head_sizes_block_sizes_and_gqa_ratios_in_three_dtypes() -> None:
    assert SHAPES == tuple(Shape(h, b, kv, g) for h in (128, 256) for b in (16, 32) for kv, g in ((2, 1), (2, 2), (1, 6)))
    assert compare.HALF_SHAPES == (Shape(128, 16, 2, 2, torch.float16), Shape(256, 16, 1, 6, torch.bfloat16))
    assert compare.V2_SHAPES == SHAPES[:3]
    assert str(Shape(256, 32, 1, 6, torch.bfloat16)) == "head_dim=256 block=32 kv_heads=1 gqa=6 bfloat16"
    assert str(SHAPES[0]) == "head_dim=128 block=16 kv_heads=2 gqa=1 float32"
    # Two gather groups of 8192 tokens, three tiles of 32 blocks, four blocks and 7 tokens.
    assert LONG_CONTEXT == 17991


def _shape_of(case: PrefixCase | DecodeCase) -> str:
    return str(Shape(case.head_dim, case.block_size, case.num_kv_heads, case.gqa_ratio, case.dtype))


def test_each_prefill_case_holds_what_its_label_says() -> None:
    planned = list(compare._prefix_grid())
    assert len(planned) == 61 and all(p.modes == (BI_V100,) and p.function == "forward_prefix" for p in planned)
    labels: dict[str, list[str]] = collections.defaultdict(list)
    seeds = set()
    for p in planned:
        case = p.build()
        assert isinstance(case, PrefixCase)
        shape, rest = p.label.split(" ", 5)[:5], p.label.split(" ", 5)[5]
        assert " ".join(shape) == _shape_of(case)
        name, holds = rest.split(": ")
        assert holds == f"contexts {list(case.context_lens)}, new tokens {list(case.query_lens)}"
        labels[" ".join(shape)].append(name)
        seeds.add(case.seed)
    assert len(seeds) == 61  # each case drawn from its own seed
    four = ["no context", "one block", "ragged last block", "several sequences"]
    for shape in (*SHAPES, *compare.HALF_SHAPES):
        extra = []
        if (shape.head_dim, shape.block_size, shape.dtype) == (128, 16, torch.float32):
            extra.append("two tiles each phase")
        if (shape.head_dim, shape.block_size, shape.num_kv_heads) == (256, 16, 1):
            extra.append("long contexts")
        assert labels[str(shape)] == four + extra, shape
    by_label = {p.label: p for p in planned}
    bs32 = "head_dim=128 block=32 kv_heads=2 gqa=2 float32"
    assert f"{bs32} several sequences: contexts [0, 32, 67, 1057], new tokens [3, 1, 17, 11]" in by_label
    assert f"{bs32} ragged last block: contexts [101], new tokens [9]" in by_label
    assert (f"{SHAPES[0]} two tiles each phase: contexts [529], new tokens [519]") in by_label
    assert f"{SHAPES[0]} no context: contexts [0], new tokens [7]" in by_label
    assert f"{SHAPES[0]} one block: contexts [16], new tokens [5]" in by_label
    assert "head_dim=256 block=16 kv_heads=1 gqa=6 bfloat16 long contexts: contexts [17991, 8192], new tokens [5, 3]" \
        in by_label


def test_each_decode_case_holds_what_its_label_says() -> None:
    planned = list(compare._decode_grid(THRESHOLDS))
    assert len(planned) == 78 and all(p.function == "forward_decode" for p in planned)
    seeds = collections.Counter()
    for p in planned:
        case = p.build()
        assert isinstance(case, DecodeCase)
        assert p.label.startswith(_shape_of(case) + " ")
        lengths = list(case.seq_lens)
        padded = case.kwargs["max_seq_len"]
        if "padded" in p.label:
            assert p.label.endswith(f"padded max_seq_len: lengths {lengths}, max_seq_len {padded}") and padded == 4096
        else:
            assert p.label.endswith(f": lengths {lengths}") and padded == max(lengths)
        seeds[case.seed] += 1
    shapes = [p for p in planned if "threshold" not in p.label]
    assert len(shapes) == 70 and len(seeds) == 70 + 2  # one seed per shape case, one per threshold cache
    assert [p.modes for p in shapes] == [(BI_V100, V2_WORKS)] * 15 + [(BI_V100,)] * 55
    first = [p.label for p in shapes[:5]]
    assert first == [f"{SHAPES[0]} one token: lengths [1]", f"{SHAPES[0]} one block: lengths [16]",
                     f"{SHAPES[0]} ragged last block: lengths [53]",
                     f"{SHAPES[0]} several sequences: lengths [1, 16, 53, 100]",
                     f"{SHAPES[0]} padded max_seq_len: lengths [37, 100], max_seq_len 4096"]
    around = [p for p in planned if "threshold" in p.label]
    assert [p.label for p in around] == [
        f"head_dim={h} block=16 kv_heads=1 gqa=2 float32 threshold {t} ({where}): lengths [5, {n}]"
        for h in (128, 256) for t, where in THRESHOLDS for n in (t, t + 1)]
    assert [p.modes for p in around] == [(BI_V100, V2_WORKS)] * 4 + [(BI_V100,)] * 4


def test_the_cases_around_thresholds_share_one_cache_per_head_size() -> None:
    around = [p.build() for p in compare._decode_grid(THRESHOLDS) if "threshold" in p.label]
    caches = [case.kwargs["key_cache"] for case in around]
    assert all(cache is caches[0] for cache in caches[:4]) and all(cache is caches[4] for cache in caches[4:])
    assert caches[0] is not caches[4]
    # As long as the longest length: 9217 tokens of blocks of 16, the last holding one token.
    assert {case.cache.keys[1].shape[0] for case in around} == {8192, 8193, 9216, 9217}
    assert caches[0].shape[0] == 1 + 577 + 3  # blocks for 5 and 9217 tokens, and the spare ones


def test_without_thresholds_decode_has_no_threshold_cases() -> None:
    assert not any("threshold" in p.label for p in compare._decode_grid(()))
    assert len(list(compare._decode_grid(()))) == 70
