"""upgrade says the same with the patch cache off, cold, warm or unwritable.

With the cache on, OLD's targets are patched in a forked child into the cache while NEW's are
patched in the process itself; the cache is only the way back, so the report must be the one a
run without any cache gives, byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from make_upgrade_pairs import make_pair


def _report(cli, old: Path, new: Path) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    result = cli("upgrade", old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, result.stdout


def test_the_report_does_not_depend_on_the_cache(cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "no-longer-applies", "v2-gains-argument")
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    without = _report(cli, old, new)
    assert without[0] == 1
    monkeypatch.delenv("PATCHER_NO_CACHE")
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    assert _report(cli, old, new) == without  # cold: OLD patched in the child, read back from the cache
    assert any((tmp_path / "cache").rglob("*"))
    assert _report(cli, old, new) == without  # warm
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("the cache cannot live here")
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(blocked))
    assert _report(cli, old, new) == without  # every write fails: the process patches OLD itself
    assert blocked.read_text() == "the cache cannot live here"
