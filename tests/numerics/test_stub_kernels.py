"""The stub custom ops compute what vLLM's kernels compute, count every call, and refuse what they do not implement.

Decode attention is checked against a per-head loop written here (query
head ``h`` reads kv head ``h // gqa``), so the stubs do not share a
grouping mistake with the case builders' reference.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics import stub_ops  # noqa: E402
from patcher.numerics.cases import make_decode_case  # noqa: E402
from patcher.numerics.stub_ops import V2_PARTITION_SIZE, StubOps, gather_tokens  # noqa: E402


def per_head(case) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """Decode attention of CASE, one sequence and one query head at a time, in float64."""
    query = case.kwargs["query"].double()
    num_seqs, num_heads, head_dim = query.shape
    gqa = num_heads // case.num_kv_heads
    out = torch.zeros(num_seqs, num_heads, head_dim, dtype=torch.float64)
    for i, n in enumerate(case.seq_lens):
        for h in range(num_heads):
            if n == 0:
                continue
            keys = case.cache.keys[i][:, h // gqa].double()
            values = case.cache.values[i][:, h // gqa].double()
            scores = keys @ query[i, h] * case.kwargs["scale"]
            out[i, h] = torch.softmax(scores, dim=0) @ values
    return out


def v1_args(case, out: torch.Tensor | None = None) -> list:  # type: ignore[no-untyped-def]
    """BI-V100's 11 arguments of paged_attention_v1."""
    k = case.kwargs
    out = torch.full_like(k["query"], math.nan) if out is None else out
    return [out, k["query"], k["key_cache"], k["value_cache"], k["num_kv_heads"], k["scale"], k["block_tables"],
            k["seq_lens"], case.block_size, k["max_seq_len"], None]


def v2_args(case, parts: int) -> list:  # type: ignore[no-untyped-def]
    """Upstream's 22 arguments of paged_attention_v2, with buffers for PARTS partitions."""
    query = case.kwargs["query"]
    exp_sums = torch.full((*query.shape[:2], parts), math.nan)
    max_logits = torch.full_like(exp_sums, math.nan)
    tmp = torch.full((*query.shape[:2], parts, query.shape[2]), math.nan, dtype=query.dtype)
    out, *rest = v1_args(case)
    return [out, exp_sums, max_logits, tmp, *rest, "auto", 1.0, 1.0, 0, 0, 0, 64, 0]


CASE = dict(num_kv_heads=2, gqa_ratio=3, head_dim=32, block_size=8)


def test_v1_matches_attention_per_head_with_gqa_and_zeroes_empty_sequences() -> None:
    case = make_decode_case([1, 0, 8, 29], **CASE, seed=1)
    ops = StubOps()
    args = v1_args(case)
    ops.paged_attention_v1(*args)
    torch.testing.assert_close(args[0].double(), per_head(case), rtol=0, atol=1e-5)
    assert torch.equal(args[0][1], torch.zeros_like(args[0][1]))  # the NaNs it held are gone
    assert ops.calls == {"paged_attention_v1": 1}


def test_v1_writes_in_the_output_dtype_and_takes_upstreams_longer_call() -> None:
    case = make_decode_case([13, 40], **CASE, dtype=torch.float16, seed=2)
    out = torch.empty_like(case.kwargs["query"])
    StubOps().paged_attention_v1(*v1_args(case, out), "auto", 1.0, 1.0, 0, 0, 0, 64, 0)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.double(), per_head(case), rtol=0, atol=2e-3)


def test_v1_fails_past_its_limit_like_the_card() -> None:
    case = make_decode_case([30, 12], **CASE, seed=3)
    at_limit = StubOps(v1_max_seq_len=30)
    at_limit.paged_attention_v1(*v1_args(case))  # 30 tokens: within
    args = v1_args(case)
    args[9] = 31
    with pytest.raises(RuntimeError) as raised:
        StubOps(v1_max_seq_len=30).paged_attention_v1(*args)
    assert str(raised.value) == "paged_attention_v1: max_seq_len=31 exceeds the kernel's shared memory (limit 30)"
    StubOps().paged_attention_v1(*args)  # no limit: never fails


V1_NAMES = ("out", "query", "key_cache", "value_cache", "num_kv_heads", "scale", "block_tables", "seq_lens",
            "block_size", "max_seq_len", "alibi_slopes", "kv_cache_dtype")
V2_NAMES = ("out", "exp_sums", "max_logits", "tmp_output", *V1_NAMES[1:])


def named_args(case, kernel: str, **changes: object) -> list:  # type: ignore[no-untyped-def]
    """The arguments of KERNEL for CASE (upstream's order, with kv_cache_dtype), CHANGES replacing some."""
    names = V1_NAMES if kernel == "paged_attention_v1" else V2_NAMES
    args = v1_args(case) + ["auto"] if kernel == "paged_attention_v1" else v2_args(case, 1)[:15]
    values = dict(zip(names, args)) | changes
    return [values[name] for name in names]


@pytest.mark.parametrize("kernel", ["paged_attention_v1", "paged_attention_v2"])
@pytest.mark.parametrize(("changes", "error", "message"), [
    (dict(alibi_slopes=torch.ones(6)), NotImplementedError, "stub paged attention: ALiBi is not implemented"),
    (dict(kv_cache_dtype="fp8"), NotImplementedError, "stub paged attention: kv_cache_dtype='fp8'"),
    (dict(num_kv_heads=3), ValueError, "num_kv_heads=3 but the key cache has 2 kv heads and the value cache 2"),
    (dict(block_size=16), ValueError, "block_size=16 but the value cache has blocks of 8"),
], ids=["alibi", "fp8", "kv-heads", "block-size"])
def test_what_the_stub_does_not_implement_is_refused_by_name(kernel, changes, error, message) -> None:  # type: ignore[no-untyped-def]
    case = make_decode_case([9], **CASE, seed=4)
    ops = StubOps(v2_available=True)
    with pytest.raises(error) as raised:
        getattr(ops, kernel)(*named_args(case, kernel, **changes))
    assert str(raised.value) == message
    assert ops.calls == {kernel: 1}


def test_query_heads_that_do_not_divide_into_kv_heads_are_refused() -> None:
    case = make_decode_case([9], **CASE, seed=4)
    with pytest.raises(ValueError) as raised:
        StubOps().paged_attention_v1(*named_args(case, "paged_attention_v1", query=case.kwargs["query"][:, :5]))
    assert str(raised.value) == "5 query heads do not divide into 2 kv heads"


def test_a_key_cache_with_other_kv_heads_is_refused_too() -> None:
    case = make_decode_case([9], **CASE, seed=4)
    args = v1_args(case)
    args[2] = args[2][:, :1]
    with pytest.raises(ValueError) as raised:
        StubOps().paged_attention_v1(*args)
    assert str(raised.value) == "num_kv_heads=2 but the key cache has 1 kv heads and the value cache 2"
    args[2], args[3] = case.kwargs["key_cache"], args[3][:, 1:]
    with pytest.raises(ValueError) as raised:
        StubOps().paged_attention_v1(*args)
    assert str(raised.value) == "num_kv_heads=2 but the key cache has 2 kv heads and the value cache 1"


def test_v2_raises_as_on_the_card_and_the_call_is_counted() -> None:
    ops = StubOps()
    with pytest.raises(NotImplementedError) as raised:
        ops.paged_attention_v2()
    assert str(raised.value) == "paged_attention_v2 is not available on BI-V100"
    assert ops.calls == {"paged_attention_v2": 1}
    ops.reset()
    assert ops.calls == {}


def test_v2_fills_each_partition_then_reduces_them_to_v1s_result() -> None:
    # 1100 tokens: partitions of 512, 512 and 76; 513: 512 and 1; 0: nothing.
    case = make_decode_case([1100, 513, 0, 7], num_kv_heads=1, gqa_ratio=2, head_dim=16, block_size=16, seed=9)
    args = v2_args(case, 3)
    ops = StubOps(v2_available=True)
    ops.paged_attention_v2(*args)
    out, exp_sums, max_logits, tmp = args[:4]
    torch.testing.assert_close(out.double(), per_head(case), rtol=0, atol=1e-5)
    assert torch.equal(out[2], torch.zeros_like(out[2]))
    assert ops.calls == {"paged_attention_v2": 1}
    query = case.kwargs["query"].double()
    for i, n in enumerate(case.seq_lens):
        parts = -(-n // V2_PARTITION_SIZE)
        for h in range(2):
            scores = case.cache.keys[i][:, 0].double() @ query[i, h] * case.kwargs["scale"]
            values = case.cache.values[i][:, 0].double()
            for p in range(3):
                chunk = scores[p * 512:(p + 1) * 512]
                if p >= parts:  # partitions past the sequence are not written
                    assert math.isnan(max_logits[i, h, p]) and math.isnan(exp_sums[i, h, p])
                    continue
                weights = torch.exp(chunk - chunk.max())
                # float(): pytest 7.0's approx does not compare a 0-d tensor (the lowest version CI runs)
                assert float(max_logits[i, h, p]) == pytest.approx(float(chunk.max()), abs=1e-5)
                assert float(exp_sums[i, h, p]) == pytest.approx(float(weights.sum()), rel=1e-5)
                partial = weights @ values[p * 512:(p + 1) * 512] / weights.sum()
                torch.testing.assert_close(tmp[i, h, p].double(), partial, rtol=0, atol=1e-5)


def test_v2_refuses_buffers_with_too_few_partitions() -> None:
    case = make_decode_case([1025, 5], num_kv_heads=1, gqa_ratio=2, head_dim=16, block_size=16, seed=9)
    StubOps(v2_available=True).paged_attention_v2(*v2_args(case, 3))
    with pytest.raises(ValueError) as raised:
        StubOps(v2_available=True).paged_attention_v2(*v2_args(case, 2))
    assert str(raised.value) == "paged_attention_v2: sequence 0 has 1025 tokens, 3 partitions, but tmp_output holds 2"


def test_gather_tokens_reads_a_sequences_slots_through_its_block_table() -> None:
    case = make_decode_case([5, 37], num_kv_heads=2, gqa_ratio=1, head_dim=16, block_size=8, seed=5)
    k = case.kwargs
    keys, values = gather_tokens(k["key_cache"], k["value_cache"], k["block_tables"][1], 37)
    assert torch.equal(keys, case.cache.keys[1]) and torch.equal(values, case.cache.values[1])
    keys, values = gather_tokens(k["key_cache"], k["value_cache"], k["block_tables"][1], 9)
    assert torch.equal(keys, case.cache.keys[1][:9]) and torch.equal(values, case.cache.values[1][:9])


# -- cache management --------------------------------------------------------------------------------


def empty_caches(num_blocks: int = 4, dtype: torch.dtype = torch.float16) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's layout for 2 kv heads of 16 dims and blocks of 4: key ``[n, 2, 16 // x, 4, x]``, value ``[n, 2, 16, 4]``."""
    x = 16 // torch.empty((), dtype=dtype).element_size()
    return torch.zeros(num_blocks, 2, 16 // x, 4, x, dtype=dtype), torch.zeros(num_blocks, 2, 16, 4, dtype=dtype)


def test_reshape_and_cache_writes_each_token_to_its_slot_and_skips_padding() -> None:
    key_cache, value_cache = empty_caches()
    key = torch.randn(4, 2, 16, generator=torch.Generator().manual_seed(1))
    value = torch.randn(4, 2, 16, generator=torch.Generator().manual_seed(2))
    ops = StubOps()
    # vLLM's slot mapping: -1 marks a padding token, which has no slot.
    ops.reshape_and_cache(key, value, key_cache, value_cache, torch.tensor([[6, -1], [0, 13]]))
    assert ops.calls == {"reshape_and_cache": 1}
    assert key_cache.dtype == torch.float16
    for token, slot in ((0, 6), (2, 0), (3, 13)):
        block, offset = divmod(slot, 4)
        assert torch.equal(key_cache[block, :, :, offset, :].reshape(2, 16), key[token].half())
        assert torch.equal(value_cache[block, :, :, offset], value[token].half())
    written = {(1, 2), (0, 0), (3, 1)}
    for block in range(4):
        for offset in range(4):
            if (block, offset) not in written:
                assert not key_cache[block, :, :, offset].any() and not value_cache[block, :, :, offset].any()


def test_reshape_and_cache_refuses_a_quantised_cache() -> None:
    key_cache, value_cache = empty_caches()
    with pytest.raises(NotImplementedError) as raised:
        StubOps().reshape_and_cache(torch.zeros(1, 2, 16), torch.zeros(1, 2, 16), key_cache, value_cache,
                                    torch.tensor([0]), "fp8_e5m2")
    assert str(raised.value) == "stub reshape_and_cache: kv_cache_dtype='fp8_e5m2'"


def numbered(num_blocks: int = 4) -> torch.Tensor:
    """A value cache whose block ``b`` holds ``b`` everywhere."""
    return torch.arange(num_blocks, dtype=torch.float32).reshape(-1, 1, 1, 1).expand(num_blocks, 2, 16, 4).clone()


def test_swap_blocks_copies_each_source_block_to_its_destination() -> None:
    src, dst = numbered(), torch.full((4, 2, 16, 4), -1.0)
    ops = StubOps()
    ops.swap_blocks(src, dst, torch.tensor([[0, 3], [2, 1]]))
    assert [float(dst[b].unique()) for b in range(4)] == [-1.0, 2.0, -1.0, 0.0]
    assert ops.calls == {"swap_blocks": 1}


def test_copy_blocks_copies_inside_every_cache() -> None:
    keys, values = [numbered(), numbered()], [numbered()]
    ops = StubOps()
    ops.copy_blocks(keys, values, torch.tensor([[1, 0], [3, 2]]))
    for cache in (*keys, *values):
        assert [float(cache[b].unique()) for b in range(4)] == [1.0, 1.0, 3.0, 3.0]
    assert ops.calls == {"copy_blocks": 1}


def test_the_module_itself_serves_as_vllm_custom_ops() -> None:
    # Module-level names are the default instance's methods, so the module can stand in sys.modules.
    assert stub_ops.calls is stub_ops.default_ops.calls
    for name in ("paged_attention_v1", "paged_attention_v2", "reshape_and_cache", "swap_blocks", "copy_blocks"):
        bound = getattr(stub_ops, name)
        assert bound.__self__ is stub_ops.default_ops and bound.__name__ == name
    assert stub_ops.default_ops.v2_available is False and stub_ops.default_ops.v1_max_seq_len is None
