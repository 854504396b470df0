"""The demo vendor's shipped paged_attn.py, loaded on the stub custom ops, computes correct attention.

The prefill matches naive attention (GQA, ragged and empty contexts, several sequences, queries and
contexts over one tile, fp16); decode runs V1, never V2, and the PyTorch path past its threshold.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from tests.fixtures_vendor import SHIPPED, VENDOR_TREE


@pytest.fixture()
def vendor() -> tuple[types.ModuleType, Any]:
    pytest.importorskip("torch")
    from patcher.numerics.loader import load_paged_attn
    from patcher.numerics.stub_ops import StubOps

    ops = StubOps()
    module = load_paged_attn((VENDOR_TREE / SHIPPED).read_bytes(), ops, "vendor_paged_attn")
    return module, ops


def test_loader_leaves_sys_modules_as_it_was(vendor: tuple[types.ModuleType, Any]) -> None:
    module, ops = vendor
    assert "vllm" not in sys.modules and "vendor_paged_attn" not in sys.modules
    assert module.ops is ops
    assert module.PagedAttention._PYTORCH_DECODE_THRESHOLD == 32768


PREFIX_SHAPES = {
    # GQA 3, a context that is not a multiple of the block size, an empty
    # context, and several sequences in one batch.
    "gqa-ragged-batch": dict(context_lens=[5, 0, 37], query_lens=[3, 7, 1],
                             num_kv_heads=2, gqa_ratio=3, head_dim=16, block_size=4),
    # 300 new tokens > _BLOCKS_PER_TILE * block_size = 128: three causal tiles.
    "query-over-one-tile": dict(context_lens=[9], query_lens=[300],
                                num_kv_heads=1, gqa_ratio=2, head_dim=16, block_size=4),
    # 75 context blocks: three context tiles, the last one partial.
    "context-over-one-tile": dict(context_lens=[298, 3], query_lens=[4, 2],
                                  num_kv_heads=2, gqa_ratio=2, head_dim=16, block_size=4),
    "head-dim-128": dict(context_lens=[20, 33], query_lens=[6, 2],
                         num_kv_heads=2, gqa_ratio=4, head_dim=128, block_size=8),
    "no-context-at-all": dict(context_lens=[0, 0], query_lens=[1, 5],
                              num_kv_heads=4, gqa_ratio=1, head_dim=32, block_size=16),
}


@pytest.mark.parametrize("shape", PREFIX_SHAPES.values(), ids=PREFIX_SHAPES.keys())
def test_forward_prefix_matches_naive_attention(vendor: tuple[types.ModuleType, Any],
                                                shape: dict) -> None:
    import torch

    from patcher.numerics.cases import make_prefix_case

    module, ops = vendor
    case = make_prefix_case(**shape, seed=7)
    out = module.PagedAttention.forward_prefix(**case.fresh_kwargs())
    assert out.shape == case.kwargs["query"].shape and out.dtype == torch.float32
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)
    direct = module.PagedAttention._forward_prefix_pytorch(**case.pytorch_kwargs())
    assert torch.equal(direct, out)
    assert sum(ops.calls.values()) == 0  # no native kernel on the prefill path


def test_forward_prefix_half_precision(vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_prefix_case

    module, _ = vendor
    case = make_prefix_case([13, 40], [9, 3], num_kv_heads=2, gqa_ratio=2, head_dim=64,
                            block_size=8, dtype=torch.float16, seed=3)
    out = module.PagedAttention.forward_prefix(**case.fresh_kwargs())
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), case.reference(), rtol=0, atol=2e-3)


def test_forward_decode_runs_v1_and_matches_pytorch_path(
        vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case

    module, ops = vendor
    case = make_decode_case([1, 17, 64, 33], num_kv_heads=2, gqa_ratio=4, head_dim=32,
                            block_size=4, seed=11)
    out = module.PagedAttention.forward_decode(**case.fresh_kwargs())
    assert ops.calls == {"paged_attention_v1": 1}
    expected = module.PagedAttention._forward_decode_pytorch(**case.pytorch_kwargs())
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-5)
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)


def test_forward_decode_never_takes_v2(vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case
    from patcher.numerics.loader import load_paged_attn
    from patcher.numerics.stub_ops import StubOps

    ops = StubOps(v2_available=True)
    module = load_paged_attn((VENDOR_TREE / SHIPPED).read_bytes(), ops, "vendor_paged_attn_v2")
    # A padded max_seq_len past 8192 makes upstream's heuristic pick V2;
    # the vendor's 'use_v1 = True' overrides it.
    case = make_decode_case([30, 12], block_size=16, seed=5, max_seq_len=9000)
    out = module.PagedAttention.forward_decode(**case.fresh_kwargs())
    assert ops.calls == {"paged_attention_v1": 1}
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)


def test_long_decode_takes_the_pytorch_path(vendor: tuple[types.ModuleType, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case

    module, ops = vendor
    monkeypatch.setattr(module.PagedAttention, "_PYTORCH_DECODE_THRESHOLD", 32)
    long = make_decode_case([40, 10], block_size=4, seed=2)
    out = module.PagedAttention.forward_decode(**long.kwargs)
    assert ops.calls["paged_attention_v1"] == 0
    torch.testing.assert_close(out, long.reference(), rtol=0, atol=1e-5)

    # At the threshold itself V1 still runs; the padded bound does not count.
    short = make_decode_case([32, 10], block_size=4, seed=2, max_seq_len=64)
    module.PagedAttention.forward_decode(**short.kwargs)
    assert ops.calls["paged_attention_v1"] == 1
