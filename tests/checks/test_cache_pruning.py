"""How the rule cache folder is kept small: the oldest entries past 2048 go, looked at once in 64 writes."""

from __future__ import annotations

import os
from pathlib import Path

from patcher.cache_store import Store
from patcher.checks.cache import RuleCache

from tests.fixtures_rules import CACHED, POLICY

SETTINGS = list(POLICY.rules.values())
KEEP = 2048


def _fill(folder: Path, count: int, start: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(start, start + count):
        entry = folder / f"{number:064x}"
        entry.write_text("{}")
        os.utime(entry, (1_000_000 + number, 1_000_000 + number))  # older numbers are older entries


def test_the_oldest_entries_beyond_the_limit_are_removed_on_the_first_write(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    _fill(folder, KEEP + 4)
    (folder / ".leftover.tmp").write_text("a temp file of another process")
    cache = RuleCache(folder, SETTINGS)
    key = cache.key(b"x = 1\n")
    cache.put(key, CACHED)
    names = {p.name for p in folder.iterdir()}
    assert len(names) == KEEP + 1 and ".leftover.tmp" in names and key in names
    assert not {f"{n:064x}" for n in range(5)} & names and f"{5:064x}" in names


def test_a_folder_at_the_limit_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    _fill(folder, KEEP - 1)
    RuleCache(folder, SETTINGS).put("f" * 64, CACHED)
    assert len(list(folder.iterdir())) == KEEP


def test_the_folder_is_looked_at_once_in_64_writes(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    cache = RuleCache(folder, SETTINGS)
    cache.put(cache.key(b"first"), CACHED)  # write 1: pruned (nothing to remove)
    _fill(folder, KEEP + 10)
    for number in range(2, 65):  # writes 2..64: not looked at
        cache.put(cache.key(b"%d" % number), CACHED)
    assert len(list(folder.iterdir())) == KEEP + 10 + 64
    cache.put(cache.key(b"65"), CACHED)  # write 65: pruned again
    assert len(list(folder.iterdir())) == KEEP


def test_an_unreadable_folder_is_not_pruned(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    Store(tmp_path / "file" / "checks", 1).prune(0)  # no exception
    assert (tmp_path / "file").read_text() == "not a folder"
