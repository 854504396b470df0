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
