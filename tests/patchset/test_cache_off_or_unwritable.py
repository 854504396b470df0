"""The patched-result cache turned off (``PATCHER_NO_CACHE``) or unwritable: every call patches, and only speed is lost.

Where the cache lives is tests/test_cache_location.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.cache import cache_dir, cached_patch_source
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import patch_source

from tests.fixtures_patches import VENDOR_SOURCE
from tests.patchset.conftest import cache_summary, shipped_patches


def test_with_the_cache_off_every_call_patches_and_keeps_the_path(
    tmp_path: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch, computed: list[str]
) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    source = VENDOR_SOURCE
    first = cached_patch_source("vendor/paged_attn.py", source, shipped_patches(patch_set))
    second = cached_patch_source("vendor/paged_attn.py", source, shipped_patches(patch_set))
    assert computed == ["vendor/paged_attn.py"] * 2
    assert first.path == second.path == "vendor/paged_attn.py" and first.changed
    assert not (tmp_path / "cache").exists()


def test_no_cache_env_turns_it_off(tmp_path: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    assert cache_dir() is None
    cached_patch_source("x.py", VENDOR_SOURCE, shipped_patches(patch_set))
    assert not (tmp_path / "cache").exists()


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, patch_set: PatchSet,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(blocker))
    outcome = cached_patch_source("x.py", VENDOR_SOURCE, shipped_patches(patch_set))
    assert outcome.changed and not outcome.failed
    assert cache_summary(outcome) == cache_summary(patch_source("x.py", VENDOR_SOURCE, shipped_patches(patch_set)))
    assert blocker.read_text() == "not a folder"  # what stands in the cache's way is left as it was
