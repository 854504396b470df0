"""Where the patched-result cache lives: PATCHER_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache; PATCHER_NO_CACHE turns it off.

Blank settings count as unset; a cache that cannot be written only costs speed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.cache import cache_dir, cached_patch_source
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import patch_source

from tests.fixtures_patches import VENDOR_SOURCE
from tests.patchset.conftest import cache_summary, shipped_patches


@pytest.fixture
def no_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder in tmp_path and none of the cache's variables set."""
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_without_settings_the_cache_is_under_the_home_folder(no_settings: Path) -> None:
    assert cache_dir() == no_settings / ".cache" / "patcher"


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_settings_count_as_unset(no_settings: Path, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, blank)
    assert cache_dir() == no_settings / ".cache" / "patcher"


def test_the_explicit_folder_wins_over_xdg(tmp_path: Path, no_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "patcher"
    monkeypatch.setenv("PATCHER_CACHE_DIR", f" {tmp_path / 'mine'} ")
    assert cache_dir() == tmp_path / "mine"


def test_default_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "patcher"


@pytest.mark.parametrize(("setting", "off"), [("0", False), (" 0 ", False), ("1", True), ("yes", True), ("true", True)])
def test_patcher_no_cache_turns_it_off_unless_zero(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                                   setting: str, off: bool) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", setting)
    assert cache_dir() == (None if off else no_settings / ".cache" / "patcher")


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
