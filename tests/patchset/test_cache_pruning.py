"""The cache keeps at most 512 entries: writing past the limit removes the least recently used, a hit counts as a use.

Another run's half-written entry (hidden, ``.*.tmp``) is left alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from patcher.patchset.cache import cached_patch_source
from patcher.patchset.model import PatchSet

from tests.fixtures_patches import VENDOR_SOURCE
from tests.patchset.conftest import shipped_patches


def _fill(store: Path, count: int) -> list[Path]:
    """COUNT entries of earlier runs, the first the oldest."""
    store.mkdir(parents=True)
    entries = []
    for n in range(count):
        old = store / f"{n:064x}"
        old.write_bytes(b'{"key": "old"}\n')
        os.utime(old, (1_700_000_000 + n, 1_700_000_000 + n))
        entries.append(old)
    return entries


def test_writing_beyond_the_limit_removes_the_least_recently_used(
    store: Path, patch_set: PatchSet, computed: list[str]
) -> None:
    entries = _fill(store, 512)
    # Another run's entry being written right now: hidden, and kept.
    other = store / f".{'e' * 64}.4242.0a1b2c3d.tmp"
    other.write_bytes(b"half written")
    source = VENDOR_SOURCE
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    names = {p.name for p in store.iterdir()}
    assert len(names) == 513 and other.name in names  # 512 entries and the other run's
    assert entries[0].name not in names and entries[1].name in names
    new = names - {p.name for p in entries} - {other.name}
    assert len(new) == 1


def test_a_hit_makes_an_entry_the_last_to_go(store: Path, patch_set: PatchSet, computed: list[str]) -> None:
    source = VENDOR_SOURCE
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    [hit] = store.iterdir()
    os.utime(hit, (1_500_000_000, 1_500_000_000))  # the oldest of all
    _fill_more = [store / f"{n:064x}" for n in range(511)]
    for n, old in enumerate(_fill_more):
        old.write_bytes(b"{}\n")
        os.utime(old, (1_700_000_000 + n, 1_700_000_000 + n))
    cached_patch_source("x.py", source, shipped_patches(patch_set))  # a hit: now the most recent
    cached_patch_source("y.py", source.replace(b"torch", b"torch ", 1), shipped_patches(patch_set))  # 513 entries
    names = {p.name for p in store.iterdir()}
    assert computed == ["x.py", "y.py"]
    assert len(names) == 512 and hit.name in names and _fill_more[0].name not in names


def test_at_the_limit_nothing_is_removed(store: Path, patch_set: PatchSet) -> None:
    entries = _fill(store, 511)
    cached_patch_source("x.py", VENDOR_SOURCE, shipped_patches(patch_set))
    assert len(list(store.iterdir())) == 512 and all(e.exists() for e in entries)
