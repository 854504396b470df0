"""A rule cache entry: what it holds, and why anything that does not check out is a miss, never an error.

As in ccache, an entry is a pure function of its key: a damaged, forged or
renamed entry is a miss, and a cache that cannot be written only costs speed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patcher.checks.base import Violation
from patcher.checks.cache import RuleCache

from tests.fixtures_rules import CACHED, POLICY

SETTINGS = list(POLICY.rules.values())


def test_an_entry_holds_its_key_and_the_findings_without_their_path(tmp_path: Path) -> None:
    cache = RuleCache(tmp_path / "checks", SETTINGS)
    key = cache.key(b"x = 1\n")
    cache.put(key, CACHED)
    assert [p.name for p in (tmp_path / "checks").iterdir()] == [key]
    assert json.loads((tmp_path / "checks" / key).read_text()[:-64]) == {"key": key, "found": [
        ["no-triton-kernels", "error", 3, "imports context_attention_fwd"],
        ["v2-needs-fallback", "note", 7, "ops.paged_attention_v2 at line 7 cannot run"]]}
    assert cache.get(key, "b/c.py") == [Violation(v.rule, v.severity, "b/c.py", v.line, v.message) for v in CACHED]
    assert cache.get(cache.key(b"x = 2\n"), "a.py") is None


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
def test_a_damaged_or_forged_entry_is_a_miss(tmp_path: Path, text: str) -> None:
    cache = RuleCache(tmp_path, SETTINGS)
    key = cache.key(b"x = 1\n")
    (tmp_path / key).write_text(text.replace("KEY", key))
    assert cache.get(key, "a.py") is None


def test_an_entry_under_another_name_is_a_miss(tmp_path: Path) -> None:
    cache = RuleCache(tmp_path, SETTINGS)
    key, other = cache.key(b"x = 1\n"), cache.key(b"x = 2\n")
    cache.put(key, CACHED)
    os.replace(tmp_path / key, tmp_path / other)
    assert cache.get(other, "a.py") is None


def test_a_cache_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "checks"
    folder.mkdir()
    cache = RuleCache(folder, SETTINGS)
    key = cache.key(b"x = 1\n")
    (folder / key).mkdir()  # the entry's name is taken by an empty folder: removed, the entry heals
    cache.put(key, CACHED)
    assert [p.name for p in folder.iterdir()] == [key] and (folder / key).is_file()
    blocked = RuleCache(tmp_path / "file" / "checks", SETTINGS)
    (tmp_path / "file").write_text("a file where the cache folder should be")
    blocked.put(key, CACHED)  # no exception: only speed is lost
    assert blocked.get(key, "a.py") is None
