"""The stub ops' paged_attention_v2 computes what V1 does, across partitions.

Without V2 it raises, as on the card.
"""

from __future__ import annotations

import pytest


def test_stub_v2_matches_v1() -> None:
    torch = pytest.importorskip("torch")
    from patcher.numerics.cases import make_decode_case
    from patcher.numerics.stub_ops import StubOps

    # Spans three 512-token partitions so the reduction is exercised.
    case = make_decode_case([1100, 7, 513], num_kv_heads=1, gqa_ratio=2, head_dim=16,
                            block_size=16, seed=9)
    k = case.kwargs
    query = k["query"]
    ops = StubOps(v2_available=True)
    parts = -(-k["max_seq_len"] // 512)
    out = torch.empty_like(query)
    exp_sums = torch.empty(query.shape[0], query.shape[1], parts)
    max_logits = torch.empty_like(exp_sums)
    tmp = torch.empty(*query.shape[:2], parts, query.shape[2])
    ops.paged_attention_v2(out, exp_sums, max_logits, tmp, query, k["key_cache"],
                           k["value_cache"], k["num_kv_heads"], k["scale"], k["block_tables"],
                           k["seq_lens"], case.block_size, k["max_seq_len"], None,
                           "auto", 1.0, 1.0, 0, 0, 0, 64, 0)
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)
    with pytest.raises(NotImplementedError):
        StubOps().paged_attention_v2(out, exp_sums, max_logits, tmp)
