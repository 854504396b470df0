"""prefix-pregather's max_gather_tokens: groups of whole tiles, one gather each, the same bits as the vendor's."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402

from patcher.numerics.cases import make_prefix_case  # noqa: E402
from patcher.numerics.loader import load_paged_attn  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

from tests.fixtures_patches import VENDOR_SOURCE  # noqa: E402
from tests.numerics.conftest import patched_with  # noqa: E402


class _Gathers(TorchFunctionMode):
    """Record how many blocks each indexing of ``key_cache`` / ``value_cache`` by a block-id tensor reads."""

    def __init__(self, key_cache: torch.Tensor, value_cache: torch.Tensor) -> None:
        super().__init__()
        self.caches = {id(key_cache): "key", id(value_cache): "value"}
        self.blocks: dict[str, list[int]] = {"key": [], "value": []}

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if func is torch.Tensor.__getitem__ and id(args[0]) in self.caches and isinstance(args[1], torch.Tensor):
            self.blocks[self.caches[id(args[0])]].append(len(args[1]))
        return func(*args, **(kwargs or {}))


def _run(source: bytes, case: Any) -> tuple[torch.Tensor, list[int]]:
    cls = load_paged_attn(source, StubOps(), "paged_attn_under_test").PagedAttention
    kwargs = case.fresh_kwargs()
    with _Gathers(kwargs["key_cache"], kwargs["value_cache"]) as gathers:
        output = cls.forward_prefix(**kwargs)
    assert gathers.blocks["key"] == gathers.blocks["value"]
    return output, gathers.blocks["key"]


# Block size 4: a tile is 32 blocks = 128 tokens; max_gather_tokens 384 makes groups of 3 tiles (96 blocks).
# 909 tokens = 228 blocks, the last holding one token: groups of 96, 96 and 36 blocks, the last
# group's last tile 4 blocks long.
RAGGED = 909


CASES = [
    pytest.param([100], 384, [25], id="shorter-than-one-group"),
    pytest.param([384], 384, [96], id="exactly-one-group"),
    pytest.param([RAGGED], 384, [96, 96, 36], id="ragged-last-group-and-tile"),
    pytest.param([0, 5, 384, RAGGED], 384, [2, 96, 96, 96, 36], id="several-sequences"),
    pytest.param([RAGGED], 0, [228], id="zero-gathers-the-whole-context-once"),
    pytest.param([RAGGED], 100, [32] * 7 + [4], id="below-one-tile-gathers-tile-by-tile"),
    pytest.param([RAGGED], 500, [96, 96, 36], id="rounded-down-to-whole-tiles"),
]


@pytest.mark.parametrize(("contexts", "value", "groups"), CASES)
def test_groups_of_whole_tiles_one_gather_each_same_bits(contexts, value, groups) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case(contexts, [5, 1, 7, 3][:len(contexts)], num_kv_heads=2, gqa_ratio=2, head_dim=32,
                            block_size=4, seed=len(contexts) + value)
    expected, per_tile = _run(VENDOR_SOURCE, case)
    actual, gathered = _run(patched_with(value), case)
    assert torch.equal(actual, expected)
    assert gathered == groups
    # The vendor gathers tile by tile: the recorder sees its gathers too.
    assert per_tile == [n for c in contexts for n in ([32] * ((-(-c // 4)) // 32) + [(-(-c // 4)) % 32]) if n]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("gqa", [1, 4, 6])
def test_every_gqa_ratio_and_dtype_is_bitwise_equal(gqa, dtype) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case([RAGGED, 130], [6, 2], num_kv_heads=1, gqa_ratio=gqa, head_dim=64, block_size=4,
                            dtype=dtype, seed=gqa)
    expected, _ = _run(VENDOR_SOURCE, case)
    actual, gathered = _run(patched_with(384), case)
    assert torch.equal(actual, expected)
    assert gathered == [96, 96, 36, 33]


@pytest.mark.parametrize(("contexts", "groups"), [([8192], [512]), ([2 * 8192 + 700], [512, 512, 44])],
                         ids=["exactly-one-default-group", "ragged-past-two-default-groups"])
def test_the_default_gathers_8192_tokens_at_a_time(contexts, groups) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case(contexts, [3], num_kv_heads=1, gqa_ratio=6, head_dim=32, block_size=16, seed=5)
    expected, _ = _run(VENDOR_SOURCE, case)
    actual, gathered = _run(patched_with(None), case)
    assert torch.equal(actual, expected)
    assert gathered == groups
