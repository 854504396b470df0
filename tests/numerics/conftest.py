"""What the numerics tests share: the shipped file patched with a given max_gather_tokens, and its class loaded on stub ops."""

from __future__ import annotations

import functools
from typing import Any

from patcher.patchset import load_patch_set
from patcher.patchset.runner import patch_source

from tests.fixtures_patches import VENDOR_SOURCE
from tests.fixtures_vendor import PATCHES, SHIPPED

try:
    from patcher.numerics.quiet_torch import torch
except ModuleNotFoundError as missing:  # no PyTorch wheel for this Python: the tests that need it skip
    if missing.name != "torch":
        raise
else:
    # Every numerics test runs PyTorch on one thread, as verify-numerics does: a process forked after
    # PyTorch has run on several threads hangs in the child at its next parallel kernel (GNU OpenMP
    # is not fork-safe), and mutation testing runs each mutant in a fork of the process that ran the
    # tests. The tensors here are small; more threads would only cost CPU.
    torch.set_num_threads(1)


def patches_with(value: int | None) -> Any:
    """The shipped patch set, prefix-pregather's max_gather_tokens set to VALUE (None: its default)."""
    overrides = [] if value is None else [f"prefix-pregather.max_gather_tokens={value}"]
    return load_patch_set(PATCHES, overrides=overrides).patches


@functools.lru_cache(maxsize=None)
def patched_with(value: int | None) -> bytes:
    """The shipped file patched with max_gather_tokens VALUE (None: its default)."""
    result = patch_source(SHIPPED, VENDOR_SOURCE, patches_with(value))
    assert not result.failed, [o.detail for o in result.outcomes]
    return result.patched


def load_class(source: bytes, ops: Any, name: str) -> Any:
    """Load SOURCE as module NAME on OPS (stub_ops.StubOps); return its PagedAttention class."""
    from patcher.numerics.loader import load_paged_attn

    return load_paged_attn(source, ops, name).PagedAttention
