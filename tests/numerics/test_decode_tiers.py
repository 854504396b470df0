"""The patched decode's three tiers: V1 for short contexts, V2 tried once then V1 in the middle, PyTorch for long ones.

Each tier is told apart by the stub ops' call counts; its output is the
vendor's (V1) or the reference's within fp32 round-off.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics.cases import make_decode_case  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402
from tests.numerics.conftest import load_class  # noqa: E402


def _decode(module, case):  # type: ignore[no-untyped-def]
    return module.forward_decode(**case.kwargs)


def test_short_decode_runs_v1_as_before() -> None:
    ops = StubOps()
    patched = load_class(PATCHED.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((40, 100), seed=1)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v1"] == 1 and ops.calls["paged_attention_v2"] == 0
    vendor_ops = StubOps()
    assert torch.equal(out, _decode(load_class(VENDOR_SOURCE, vendor_ops, "vendor_paged_attn"), case))


def test_middle_tier_tries_v2_once_then_stays_on_v1() -> None:
    ops = StubOps()
    patched = load_class(PATCHED.read_bytes(), ops, "patched_paged_attn")
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
    patched = load_class(PATCHED.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((9000,), num_kv_heads=1, gqa_ratio=2, head_dim=32, block_size=64, seed=4)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v2"] == 1 and ops.calls["paged_attention_v1"] == 0
    assert torch.allclose(out, case.reference(), atol=1e-5)


def test_long_decode_takes_the_pytorch_path() -> None:
    ops = StubOps()
    patched = load_class(PATCHED.read_bytes(), ops, "patched_paged_attn")
    case = make_decode_case((32769,), num_kv_heads=1, gqa_ratio=1, head_dim=16, block_size=256, seed=5)
    out = _decode(patched, case)
    assert ops.calls["paged_attention_v1"] == 0 and ops.calls["paged_attention_v2"] == 0
    assert torch.allclose(out, case.reference(), atol=1e-5)
