"""The case builders: one seed holds the same values in every dtype, and a decode case shortens over its own cache."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_decode_case, make_prefix_case  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_a_seed_holds_the_fp32_values_rounded_in_any_dtype(dtype) -> None:  # type: ignore[no-untyped-def]
    # The key cache's layout depends on the dtype (x = 16 // element size); the values must not.
    fp32 = make_prefix_case([37, 0], [5, 3], num_kv_heads=2, gqa_ratio=3, head_dim=64, block_size=8, seed=11)
    half = make_prefix_case([37, 0], [5, 3], num_kv_heads=2, gqa_ratio=3, head_dim=64, block_size=8, seed=11,
                            dtype=dtype)
    assert fp32.kwargs["key_cache"].shape[-1] == 4 and half.kwargs["key_cache"].shape[-1] == 8
    for name in ("query", "key", "value"):
        assert torch.equal(half.kwargs[name], fp32.kwargs[name].to(dtype)), name
    for mine, theirs in zip((*half.cache.keys, *half.cache.values), (*fp32.cache.keys, *fp32.cache.values)):
        assert torch.equal(mine, theirs.to(dtype))
    assert torch.equal(half.kwargs["block_tables"], fp32.kwargs["block_tables"])


def test_a_shortened_decode_case_reads_the_same_cache_and_only_its_own_tokens() -> None:
    long = make_decode_case([5, 300], num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=16, seed=6)
    short = long.with_lengths([5, 201])
    assert short.seq_lens == (5, 201) and short.kwargs["max_seq_len"] == 201
    assert short.kwargs["seq_lens"].tolist() == [5, 201]
    assert short.kwargs["key_cache"] is long.kwargs["key_cache"]  # not drawn again
    assert torch.equal(short.cache.keys[1], long.cache.keys[1][:201])
    # Tokens 201..299 are still in the cache: a kernel that read them would not match the reference.
    out = torch.empty_like(short.kwargs["query"])
    kwargs = short.fresh_kwargs()
    StubOps().paged_attention_v1(out, kwargs["query"], kwargs["key_cache"], kwargs["value_cache"], 1,
                                 kwargs["scale"], kwargs["block_tables"], kwargs["seq_lens"], 16, 201, None)
    torch.testing.assert_close(out, short.reference(), rtol=0, atol=1e-5)
    assert not torch.allclose(short.reference(), long.reference(), atol=1e-3)
    with pytest.raises(ValueError, match="do not shorten"):
        long.with_lengths([5, 301])


# -- the paged layout ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_each_token_sits_in_its_slot_in_vllms_layout(dtype) -> None:  # type: ignore[no-untyped-def]
    case = make_decode_case([5, 0, 37], num_kv_heads=2, gqa_ratio=1, head_dim=32, block_size=8, dtype=dtype, seed=3)
    key_cache, value_cache, tables = (case.kwargs[name] for name in ("key_cache", "value_cache", "block_tables"))
    x = 16 // torch.empty((), dtype=dtype).element_size()
    assert key_cache.shape == (1 + 0 + 5 + 3, 2, 32 // x, 8, x) and value_cache.shape == (9, 2, 32, 8)
    assert key_cache.dtype == value_cache.dtype == dtype and tables.dtype == torch.int32
    for i, n in enumerate(case.seq_lens):
        assert case.cache.keys[i].shape == case.cache.values[i].shape == (n, 2, 32)
        for t in range(n):
            block, offset = int(tables[i, t // 8]), t % 8
            assert torch.equal(key_cache[block, :, :, offset, :].reshape(2, 32), case.cache.keys[i][t])
            assert torch.equal(value_cache[block, :, :, offset], case.cache.values[i][t])


def test_blocks_are_owned_once_shuffled_and_the_rest_is_garbage() -> None:
    case = make_decode_case([40, 3, 100], num_kv_heads=1, gqa_ratio=2, head_dim=16, block_size=4, seed=8,
                            spare_blocks=5, pad_blocks=2)
    tables = case.kwargs["block_tables"]
    # As vLLM hands them to the kernels: int32 block tables and lengths.
    assert (tables.dtype, case.kwargs["seq_lens"].dtype) == (torch.int32, torch.int32)
    used = [10, 1, 25]
    num_blocks = sum(used) + 5
    assert case.kwargs["key_cache"].shape[0] == num_blocks
    assert tables.shape == (3, 25 + 2)
    owned = [int(b) for i, n in enumerate(used) for b in tables[i, :n]]
    assert len(set(owned)) == len(owned) == 36  # no block shared between sequences
    assert owned != sorted(owned)  # handed out shuffled, so a kernel cannot assume contiguous blocks
    assert int(tables.min()) >= 0 and int(tables.max()) < num_blocks  # padding names real blocks
    # Padding and spare blocks hold values no sequence owns: a kernel reading them gets a wrong answer.
    spare = sorted(set(range(num_blocks)) - set(owned))
    assert len(spare) == 5 and bool(case.kwargs["value_cache"][spare].abs().sum() > 0)
    # The tail of a sequence's last block holds garbage too (40 tokens: 10 full blocks; 3 tokens: 1 of 4 slots).
    last = int(tables[1, 0])
    assert not torch.equal(case.kwargs["value_cache"][last, :, :, 3], torch.zeros(1, 16))


def test_empty_sequences_without_spare_blocks_still_build() -> None:
    case = make_decode_case([0, 0], num_kv_heads=1, gqa_ratio=1, head_dim=16, spare_blocks=0)
    assert case.kwargs["key_cache"].shape[0] == 0
    assert torch.equal(case.kwargs["block_tables"], torch.zeros(2, 1, dtype=torch.int32))
    assert case.kwargs["max_seq_len"] == 0
    assert torch.equal(case.reference(), torch.zeros(2, 1, 16))


def test_a_batch_of_no_sequences_has_an_empty_reference() -> None:
    decode = make_decode_case([], num_kv_heads=1, gqa_ratio=2, head_dim=16)
    assert decode.kwargs["max_seq_len"] == 0 and decode.with_lengths([]).kwargs["max_seq_len"] == 0
    assert decode.reference().shape == (0, 2, 16) and decode.reference().dtype == torch.float32
    prefix = make_prefix_case([], [], num_kv_heads=1, gqa_ratio=2, head_dim=16)
    assert prefix.reference().shape == (0, 2, 16) and prefix.reference().dtype == torch.float32


def test_a_head_size_the_layout_cannot_split_is_refused() -> None:
    with pytest.raises(ValueError) as raised:
        make_decode_case([4], head_dim=12, dtype=torch.float16)
    assert str(raised.value) == "head_dim=12 is not a multiple of x=8 for torch.float16"
    make_decode_case([4], head_dim=12, dtype=torch.float32)  # x=4 divides it


def test_the_same_arguments_give_the_same_values_and_another_seed_others() -> None:
    first, again = (make_prefix_case([20, 3], [4, 2], seed=5) for _ in range(2))
    other = make_prefix_case([20, 3], [4, 2], seed=6)
    for name in ("query", "key", "value", "key_cache", "value_cache", "block_tables"):
        assert torch.equal(first.kwargs[name], again.kwargs[name]), name
        assert not torch.equal(first.kwargs[name], other.kwargs[name]), name


# -- the arguments ------------------------------------------------------------------------------------


def test_decode_arguments_and_defaults() -> None:
    case = make_decode_case([5, 20])
    assert (case.seq_lens, case.num_kv_heads, case.gqa_ratio, case.head_dim, case.block_size, case.dtype,
            case.seed) == ((5, 20), 2, 2, 64, 16, torch.float32, 0)
    k = case.kwargs
    assert list(k) == ["query", "key_cache", "value_cache", "block_tables", "seq_lens", "max_seq_len",
                       "kv_cache_dtype", "num_kv_heads", "scale", "alibi_slopes", "k_scale", "v_scale"]
    assert k["query"].shape == (2, 4, 64) and k["query"].dtype == torch.float32
    assert k["key_cache"].shape == (1 + 2 + 3, 2, 16, 16, 4) and k["block_tables"].shape == (2, 2 + 1)
    assert k["seq_lens"].dtype == torch.int32 and k["seq_lens"].tolist() == [5, 20]
    assert (k["max_seq_len"], k["kv_cache_dtype"], k["num_kv_heads"], k["scale"], k["alibi_slopes"], k["k_scale"],
            k["v_scale"]) == (20, "auto", 2, 0.125, None, 1.0, 1.0)
    assert make_decode_case([5, 20], max_seq_len=4096).kwargs["max_seq_len"] == 4096
    assert make_decode_case([5, 20], device=torch.device("cpu")).kwargs["query"].device.type == "cpu"
    assert list(case.pytorch_kwargs()) == ["query", "key_cache", "value_cache", "block_tables", "seq_lens", "scale"]


def test_prefix_arguments_hold_the_new_tokens_and_their_offsets() -> None:
    case = make_prefix_case([20, 0, 7], [3, 5, 1])
    assert (case.context_lens, case.query_lens, case.num_kv_heads, case.gqa_ratio, case.head_dim, case.block_size,
            case.dtype, case.seed) == ((20, 0, 7), (3, 5, 1), 2, 2, 64, 16, torch.float32, 0)
    k = case.kwargs
    assert list(k) == ["query", "key", "value", "kv_cache_dtype", "key_cache", "value_cache", "block_tables",
                       "query_start_loc", "seq_lens_tensor", "context_lens", "max_query_len", "alibi_slopes",
                       "sliding_window", "k_scale", "v_scale"]
    assert k["query"].shape == (9, 4, 64)
    # The new tokens' keys and values: each sequence's tail, in order, also in the cache.
    assert torch.equal(k["key"], torch.cat([case.cache.keys[0][20:], case.cache.keys[1], case.cache.keys[2][7:]]))
    assert torch.equal(k["value"], torch.cat([case.cache.values[0][20:], case.cache.values[1],
                                              case.cache.values[2][7:]]))
    ints = {name: (k[name].dtype, k[name].tolist()) for name in ("query_start_loc", "seq_lens_tensor", "context_lens")}
    assert ints == {"query_start_loc": (torch.int32, [0, 3, 8, 9]), "seq_lens_tensor": (torch.int32, [23, 5, 8]),
                    "context_lens": (torch.int32, [20, 0, 7])}
    assert (k["max_query_len"], k["kv_cache_dtype"], k["alibi_slopes"], k["sliding_window"], k["k_scale"],
            k["v_scale"]) == (5, "auto", None, None, 1.0, 1.0)
    assert case.kwargs["key_cache"].shape == (2 + 1 + 1 + 3, 2, 16, 16, 4) and k["block_tables"].shape == (3, 2 + 1)
    assert list(case.pytorch_kwargs()) == ["query", "key", "value", "key_cache", "value_cache", "block_tables",
                                           "query_start_loc", "seq_lens_tensor", "context_lens"]
    empty = make_prefix_case([], [])
    assert empty.kwargs["key"].shape == (0, 2, 64) and empty.kwargs["max_query_len"] == 0
    assert empty.kwargs["query_start_loc"].tolist() == [0]


def test_context_and_query_lengths_must_pair_up() -> None:
    with pytest.raises(ValueError) as raised:
        make_prefix_case([4, 5], [1, 2, 3])
    assert str(raised.value) == "2 context lengths but 3 query lengths"


def test_fresh_arguments_are_copies_the_pristine_ones_stay_untouched() -> None:
    case = make_prefix_case([9], [2], seed=1)
    for fresh in (case.fresh_kwargs(), case.pytorch_kwargs()):
        for name, value in fresh.items():
            if isinstance(value, torch.Tensor):
                assert value is not case.kwargs[name] and torch.equal(value, case.kwargs[name])
                assert value.stride() == case.kwargs[name].stride()
                value.zero_()
            else:
                assert value == case.kwargs[name]
    assert bool(case.kwargs["query"].abs().sum() > 0)  # what the copies' writers did is not seen here
    decode = make_decode_case([9], seed=1)
    fresh = decode.fresh_kwargs()
    assert set(fresh) == set(decode.kwargs) and fresh["query"] is not decode.kwargs["query"]


# -- the references --------------------------------------------------------------------------------------


def naive(query, keys, values, scale, visible):  # type: ignore[no-untyped-def]
    """Attention of one token's heads in float64, over the first VISIBLE keys; head h reads kv head h // gqa."""
    heads, kv = query.shape[0], keys.shape[1]
    out = torch.zeros(heads, query.shape[1], dtype=torch.float64)
    for h in range(heads):
        k, v = keys[:visible, h // (heads // kv)].double(), values[:visible, h // (heads // kv)].double()
        out[h] = torch.softmax(k @ query[h].double() * scale, dim=0) @ v
    return out


def test_the_prefill_reference_is_causal_attention_over_context_and_new_tokens() -> None:
    case = make_prefix_case([20, 0, 7], [3, 5, 1], num_kv_heads=2, gqa_ratio=3, head_dim=16, block_size=4, seed=2)
    reference = case.reference()
    assert reference.shape == (9, 6, 16) and reference.dtype == torch.float32
    row = 0
    for i, (ctx, q_len) in enumerate(zip(case.context_lens, case.query_lens)):
        for r in range(q_len):
            expected = naive(case.kwargs["query"][row], case.cache.keys[i], case.cache.values[i], 16 ** -0.5,
                             visible=ctx + r + 1)
            torch.testing.assert_close(reference[row].double(), expected, rtol=0, atol=1e-5)
            row += 1
    assert case.reference() is reference  # computed once per case


def test_the_decode_reference_is_attention_over_each_whole_sequence() -> None:
    case = make_decode_case([7, 0, 33], num_kv_heads=2, gqa_ratio=2, head_dim=16, block_size=8,
                            dtype=torch.bfloat16, seed=4)
    reference = case.reference()
    assert reference.shape == (3, 4, 16) and reference.dtype == torch.float32
    for i, n in enumerate(case.seq_lens):
        if n == 0:
            assert torch.equal(reference[i], torch.zeros(4, 16))
            continue
        expected = naive(case.kwargs["query"][i], case.cache.keys[i], case.cache.values[i], 0.25, visible=n)
        torch.testing.assert_close(reference[i].double(), expected, rtol=0, atol=1e-5)
    assert case.reference() is reference


def test_a_shortened_case_keeps_its_lengths_dtype_and_refuses_what_does_not_shorten() -> None:
    long = make_decode_case([5, 30], num_kv_heads=1, gqa_ratio=2, head_dim=32, seed=6)
    none = long.with_lengths([0, 30])
    assert none.seq_lens == (0, 30) and none.kwargs["seq_lens"].dtype == torch.int32
    assert none.cache.keys[0].shape[0] == 0 and torch.equal(none.reference()[0], torch.zeros(2, 32))
    assert long.with_lengths([5, 30]).kwargs["max_seq_len"] == 30
    for lengths in ([5], [5, 30, 1], [-1, 30], [6, 30]):
        with pytest.raises(ValueError) as raised:
            long.with_lengths(lengths)
        assert str(raised.value) == f"lengths {lengths} do not shorten [5, 30]"
