"""The patched shipped paged_attn.py prefills what the vendor's did, bit for bit, on CPU PyTorch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_prefix_case  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402
from tests.numerics.conftest import load_class  # noqa: E402


PREFIX_SHAPES = [
    # context lengths, query lengths, kv heads, GQA ratio, head_dim, block size
    pytest.param((37,), (5,), 2, 3, 64, 8, id="gqa3-ragged-context"),
    pytest.param((0,), (9,), 1, 4, 64, 16, id="empty-context"),
    pytest.param((16, 0, 45), (3, 7, 1), 2, 2, 32, 16, id="several-sequences"),
    pytest.param((300,), (140,), 1, 6, 128, 4, id="query-longer-than-a-tile"),
    pytest.param((8,), (2,), 1, 2, 256, 8, id="one-block-head-256"),
]


@pytest.mark.parametrize(("contexts", "queries", "kv_heads", "gqa", "head_dim", "block"), PREFIX_SHAPES)
def test_prefix_output_is_bitwise_identical(contexts, queries, kv_heads, gqa, head_dim, block) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case(contexts, queries, num_kv_heads=kv_heads, gqa_ratio=gqa,
                            head_dim=head_dim, block_size=block, seed=7)
    vendor = load_class(VENDOR_SOURCE, StubOps(), "vendor_paged_attn")
    patched = load_class(PATCHED.read_bytes(), StubOps(), "patched_paged_attn")
    expected = vendor._forward_prefix_pytorch(**case.pytorch_kwargs())
    actual = patched._forward_prefix_pytorch(**case.pytorch_kwargs())
    assert torch.equal(expected, actual)
    assert torch.equal(patched.forward_prefix(**case.fresh_kwargs()), expected)


def test_prefix_is_bitwise_identical_in_fp16() -> None:
    case = make_prefix_case((70, 9), (33, 4), num_kv_heads=1, gqa_ratio=6, head_dim=128,
                            block_size=16, dtype=torch.float16, seed=3)
    vendor = load_class(VENDOR_SOURCE, StubOps(), "vendor_paged_attn")
    patched = load_class(PATCHED.read_bytes(), StubOps(), "patched_paged_attn")
    assert torch.equal(vendor._forward_prefix_pytorch(**case.pytorch_kwargs()),
                       patched._forward_prefix_pytorch(**case.pytorch_kwargs()))
