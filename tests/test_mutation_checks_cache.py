"""The rule cache on disk: what an entry holds, what makes it a miss, and how the folder is kept small.

Written against the survivors of a mutation run of ``patcher/checks/cache.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patcher.cache_store import Store
from patcher.checks import load_policy
from patcher.checks.base import Settings, Severity, Violation
from patcher.checks.cache import RuleCache, cache_dir, rules_key

from tests.fixtures_vendor import PATCHES

POLICY = load_policy(PATCHES / "policy.toml")
SETTINGS = list(POLICY.rules.values())
FOUND = [Violation("no-triton-kernels", Severity.ERROR, "a.py", 3, "imports context_attention_fwd"),
         Violation("v2-needs-fallback", Severity.NOTE, "a.py", 7, "ops.paged_attention_v2 at line 7 cannot run")]
KEEP = 2048


def test_the_folder_is_checks_under_the_patch_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache" / "checks"
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    assert cache_dir() is None


def test_an_entry_holds_its_key_and_the_findings_without_their_path(tmp_path: Path) -> None:
    cache = RuleCache(tmp_path / "checks", SETTINGS)
    key = cache.key(b"x = 1\n")
    cache.put(key, FOUND)
    assert [p.name for p in (tmp_path / "checks").iterdir()] == [key]
    assert json.loads((tmp_path / "checks" / key).read_text()[:-64]) == {"key": key, "found": [
        ["no-triton-kernels", "error", 3, "imports context_attention_fwd"],
        ["v2-needs-fallback", "note", 7, "ops.paged_attention_v2 at line 7 cannot run"]]}
    assert cache.get(key, "b/c.py") == [Violation(v.rule, v.severity, "b/c.py", v.line, v.message) for v in FOUND]
    assert cache.get(cache.key(b"x = 2\n"), "a.py") is None


def test_a_key_depends_on_the_bytes_and_on_every_setting_of_the_rules() -> None:
    same = RuleCache(Path("unused"), SETTINGS)
    assert same.key(b"x = 1\n") == RuleCache(Path("unused"), list(SETTINGS)).key(b"x = 1\n")
    assert same.key(b"x = 1\n") != same.key(b"x = 1\r\n")
    base = Settings("v1-length-limit", Severity.WARNING, "the V1 kernel fails past 32K", {"max-tokens": 32768})
    variants = [
        [base],
        [Settings("v1-length-limit", Severity.ERROR, base.reason, base.params)],
        [Settings("v1-length-limit", Severity.WARNING, base.reason, {"max-tokens": 65536})],
        [Settings("v1-length-limit", Severity.WARNING, base.reason, {"max-tokens": "32768"})],
        [Settings("python-3.10", Severity.WARNING, base.reason, base.params)],
        [base, Settings("python-3.10", Severity.ERROR, "the image runs 3.10")],
    ]
    assert len({rules_key(v) for v in variants}) == len(variants)
    # The reason is not part of it: it never changes what a rule finds.
    assert rules_key([Settings("v1-length-limit", Severity.WARNING, "reworded", base.params)]) == rules_key([base])


@pytest.mark.parametrize("text", [
    "not json",
    '{"found": []}',
    '{"key": "KEY"}',
    '{"key": "KEY", "found": [["no-triton-kernels", "fatal", 3, "m"]]}',
    '{"key": "KEY", "found": [["no-triton-kernels", "error", "three", "m"]]}',
    '{"key": "KEY", "found": [["no-triton-kernels", "error", 3]]}',
    '{"key": "KEY", "found": 3}',
    '["KEY"]',
])
def test_an_entry_that_does_not_check_out_is_a_miss(tmp_path: Path, text: str) -> None:
    cache = RuleCache(tmp_path, SETTINGS)
    key = cache.key(b"x = 1\n")
    (tmp_path / key).write_text(text.replace("KEY", key))
    assert cache.get(key, "a.py") is None


def test_an_entry_under_another_name_is_a_miss(tmp_path: Path) -> None:
    cache = RuleCache(tmp_path, SETTINGS)
    key, other = cache.key(b"x = 1\n"), cache.key(b"x = 2\n")
    cache.put(key, FOUND)
    os.replace(tmp_path / key, tmp_path / other)
    assert cache.get(other, "a.py") is None


def test_a_cache_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "checks"
    folder.mkdir()
    cache = RuleCache(folder, SETTINGS)
    key = cache.key(b"x = 1\n")
    (folder / key).mkdir()  # the entry's name is taken by an empty folder: removed, the entry heals
    cache.put(key, FOUND)
    assert [p.name for p in folder.iterdir()] == [key] and (folder / key).is_file()
    blocked = RuleCache(tmp_path / "file" / "checks", SETTINGS)
    (tmp_path / "file").write_text("a file where the cache folder should be")
    blocked.put(key, FOUND)  # no exception: only speed is lost
    assert blocked.get(key, "a.py") is None


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
    cache.put(key, FOUND)
    names = {p.name for p in folder.iterdir()}
    assert len(names) == KEEP + 1 and ".leftover.tmp" in names and key in names
    assert not {f"{n:064x}" for n in range(5)} & names and f"{5:064x}" in names


def test_a_folder_at_the_limit_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    _fill(folder, KEEP - 1)
    RuleCache(folder, SETTINGS).put("f" * 64, FOUND)
    assert len(list(folder.iterdir())) == KEEP


def test_the_folder_is_looked_at_once_in_64_writes(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    cache = RuleCache(folder, SETTINGS)
    cache.put(cache.key(b"first"), FOUND)  # write 1: pruned (nothing to remove)
    _fill(folder, KEEP + 10)
    for number in range(2, 65):  # writes 2..64: not looked at
        cache.put(cache.key(b"%d" % number), FOUND)
    assert len(list(folder.iterdir())) == KEEP + 10 + 64
    cache.put(cache.key(b"65"), FOUND)  # write 65: pruned again
    assert len(list(folder.iterdir())) == KEEP


def test_an_unreadable_folder_is_not_pruned(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    Store(tmp_path / "file" / "checks", 1).prune(0)  # no exception
    assert (tmp_path / "file").read_text() == "not a folder"
