"""The patched shipped paged_attn.py computes what the vendor's did, on CPU PyTorch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.fixtures_vendor import SHIPPED, VENDOR_TREE  # noqa: E402
from patcher.numerics.cases import make_decode_case, make_prefix_case  # noqa: E402
from patcher.numerics.loader import load_paged_attn  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_cli import GOLDEN  # noqa: E402

VENDOR = (VENDOR_TREE / SHIPPED).read_bytes()


def _load(source: bytes, ops: StubOps, name: str):  # type: ignore[no-untyped-def]
    return load_paged_attn(source, ops, name).PagedAttention


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
    vendor = _load(VENDOR, StubOps(), "vendor_paged_attn")
    patched = _load(GOLDEN.read_bytes(), StubOps(), "patched_paged_attn")
    expected = vendor._forward_prefix_pytorch(**case.pytorch_kwargs())
    actual = patched._forward_prefix_pytorch(**case.pytorch_kwargs())
    assert torch.equal(expected, actual)
    assert torch.equal(patched.forward_prefix(**case.fresh_kwargs()), expected)


def test_prefix_is_bitwise_identical_in_fp16() -> None:
    case = make_prefix_case((70, 9), (33, 4), num_kv_heads=1, gqa_ratio=6, head_dim=128,
                            block_size=16, dtype=torch.float16, seed=3)
    vendor = _load(VENDOR, StubOps(), "vendor_paged_attn")
    patched = _load(GOLDEN.read_bytes(), StubOps(), "patched_paged_attn")
    assert torch.equal(vendor._forward_prefix_pytorch(**case.pytorch_kwargs()),
                       patched._forward_prefix_pytorch(**case.pytorch_kwargs()))


def _decode(module, case):  # type: ignore[no-untyped-def]
    return module.forward_decode(**case.kwargs)


def test_short_decode_runs_v1_as_before() -> None:
    ops = StubOps()
    patched = _load(GOLDEN.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((40, 100), seed=1)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v1"] == 1 and ops.calls["paged_attention_v2"] == 0
    vendor_ops = StubOps()
    assert torch.equal(out, _decode(_load(VENDOR, vendor_ops, "vendor_paged_attn"), case))


def test_middle_tier_tries_v2_once_then_stays_on_v1() -> None:
    ops = StubOps()
    patched = _load(GOLDEN.read_bytes(), ops, "patched_paged_attn")
    patched_small = 8192
    case = make_decode_case((patched_small + 40, 12), num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=64, seed=2)
    first = _decode(patched, case)
    second = _decode(patched, case)
    assert ops.calls["paged_attention_v2"] == 1  # tried once per process, then remembered
    assert ops.calls["paged_attention_v1"] == 2
    assert patched._v2_unavailable is True
    assert torch.allclose(first, case.reference(), atol=1e-5)
    assert torch.equal(first, second)


def test_middle_tier_uses_v2_where_it_exists() -> None:
    ops = StubOps(v2_available=True)
    patched = _load(GOLDEN.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((9000,), num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=64, seed=4)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v2"] == 1 and ops.calls["paged_attention_v1"] == 0
    assert torch.allclose(out, case.reference(), atol=1e-5)


def test_long_decode_takes_the_pytorch_path() -> None:
    ops = StubOps()
    patched = _load(GOLDEN.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((32769,), num_kv_heads=1, gqa_ratio=1, head_dim=16, block_size=256, seed=5)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v1"] == 0 and ops.calls["paged_attention_v2"] == 0
    assert torch.allclose(out, case.reference(), atol=1e-5)
