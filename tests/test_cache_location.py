"""Where the cache lives (patcher/cache_store.py): PATCHER_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache; PATCHER_NO_CACHE turns it off.

Blank settings count as unset. The patch cache uses this folder itself,
the rule cache its ``checks/`` (tests/checks/test_cache_location.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.cache_store import cache_root


@pytest.fixture
def no_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder in tmp_path and none of the cache's variables set."""
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_without_settings_the_cache_is_under_the_home_folder(no_settings: Path) -> None:
    assert cache_root() == no_settings / ".cache" / "patcher"


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_settings_count_as_unset(no_settings: Path, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, blank)
    assert cache_root() == no_settings / ".cache" / "patcher"


def test_the_explicit_folder_wins_over_xdg(tmp_path: Path, no_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "patcher"
    monkeypatch.setenv("PATCHER_CACHE_DIR", f" {tmp_path / 'mine'} ")
    assert cache_root() == tmp_path / "mine"


def test_default_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "patcher"


@pytest.mark.parametrize(("setting", "off"), [("0", False), (" 0 ", False), ("1", True), ("yes", True), ("true", True)])
def test_patcher_no_cache_turns_it_off_unless_zero(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                                   setting: str, off: bool) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", setting)
    assert cache_root() == (None if off else no_settings / ".cache" / "patcher")
