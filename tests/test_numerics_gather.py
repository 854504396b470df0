"""prefix-pregather's max_gather_tokens: groups of whole tiles, one gather each, the same bits as the vendor's."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

from patcher.numerics.cases import make_prefix_case  # noqa: E402
from patcher.numerics.loader import load_paged_attn  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402
from patcher.patchset import load_patch_set  # noqa: E402
from patcher.patchset.runner import Status, patch_source  # noqa: E402

VENDOR = (VENDOR_TREE / SHIPPED).read_bytes()
GOLDEN = Path(__file__).parent / "golden"


def _patches(value: int | None) -> Any:
    overrides = [] if value is None else [f"prefix-pregather.max_gather_tokens={value}"]
    return load_patch_set(PATCHES, overrides=overrides).patches


@functools.lru_cache(maxsize=None)
def _patched(value: int | None) -> bytes:
    result = patch_source(SHIPPED, VENDOR, _patches(value))
    assert not result.failed, [o.detail for o in result.outcomes]
    return result.patched


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
    expected, per_tile = _run(VENDOR, case)
    actual, gathered = _run(_patched(value), case)
    assert torch.equal(actual, expected)
    assert gathered == groups
    # The vendor gathers tile by tile: the recorder sees its gathers too.
    assert per_tile == [n for c in contexts for n in ([32] * ((-(-c // 4)) // 32) + [(-(-c // 4)) % 32]) if n]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("gqa", [1, 4, 6])
def test_every_gqa_ratio_and_dtype_is_bitwise_equal(gqa, dtype) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case([RAGGED, 130], [6, 2], num_kv_heads=1, gqa_ratio=gqa, head_dim=64, block_size=4,
                            dtype=dtype, seed=gqa)
    expected, _ = _run(VENDOR, case)
    actual, gathered = _run(_patched(384), case)
    assert torch.equal(actual, expected)
    assert gathered == [96, 96, 36, 33]


@pytest.mark.parametrize(("contexts", "groups"), [([8192], [512]), ([2 * 8192 + 700], [512, 512, 44])],
                         ids=["exactly-one-default-group", "ragged-past-two-default-groups"])
def test_the_default_gathers_8192_tokens_at_a_time(contexts, groups) -> None:  # type: ignore[no-untyped-def]
    case = make_prefix_case(contexts, [3], num_kv_heads=1, gqa_ratio=6, head_dim=32, block_size=16, seed=5)
    expected, _ = _run(VENDOR, case)
    actual, gathered = _run(_patched(None), case)
    assert torch.equal(actual, expected)
    assert gathered == groups


@pytest.mark.parametrize("value", [None, 0, 100, 2048])
def test_the_result_is_recognised_as_already_applied_for_every_value(value) -> None:  # type: ignore[no-untyped-def]
    patched = _patched(value)
    again = patch_source(SHIPPED, patched, _patches(value))
    assert [o.status for o in again.outcomes] == [Status.ALREADY_APPLIED] * 3
    assert again.patched == patched


def test_a_file_patched_with_another_value_is_not_taken_for_already_applied() -> None:
    again = patch_source(SHIPPED, _patched(None), _patches(0))
    outcome = next(o for o in again.outcomes if o.patch.id == "prefix-pregather")
    assert outcome.status is Status.FAILED
    assert "the file already has this patch with other parameters" in outcome.detail
    assert again.patched == _patched(None)


def test_committed_patched_copies_are_what_apply_writes(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    # benchmarks/gpu_prefix.py and cpu_prefix_memory.py read these plain files.
    for name, extra in (("paged_attn.patched.py", ()), ("paged_attn.patched-gather0.py",
                                                        ("--set", "prefix-pregather.max_gather_tokens=0"))):
        out = cli.cwd / name
        result = cli("apply", vendor_zip, "-o", out, *extra)
        assert result.exit_code == 0, result.stderr
        assert (out / SHIPPED).read_bytes() == (GOLDEN / name).read_bytes(), name


def test_a_negative_value_is_refused(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", cli.cwd / "out", "--set", "prefix-pregather.max_gather_tokens=-1")
    assert result.exit_code == 2
    assert "-1 is below the minimum 0" in result.stderr
    assert not (cli.cwd / "out").exists()


def test_cpu_memory_benchmark_runs_on_a_tiny_size() -> None:
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux /proc")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu_prefix_memory.py"),
                           "--context", "700", "--chunk", "8"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("vendor", "patched"))]
    assert [row.split("  ")[0] for row in rows] == ["vendor", "patched, max_gather_tokens=8192 (default)",
                                                   "patched, max_gather_tokens=0"]
    assert all(len(row.split()[-3:]) == 3 for row in rows)
    assert lines[-1].startswith("# extra peak resident memory of 'patched, max_gather_tokens=8192 (default)' "
                                "over the vendor's at 700 context tokens, fp32: ")
    assert lines[-1].endswith("MB (under 64.0 MB)")
