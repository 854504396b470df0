"""upgrade where the platform has no ``fork`` (Windows): nothing is patched or judged ahead, the report is the same."""

from __future__ import annotations

import os

import pytest

from make_upgrade_pairs import make_pair


def test_upgrade_without_fork_reports_what_it_reports_with_it(cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "v2-gains-argument")
    with_fork = cli("upgrade", old, new, "--format", "json")
    assert with_fork.exit_code == 1, with_fork.stderr
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cold"))  # nothing known: every drop is patched anew
    if hasattr(os, "fork"):
        monkeypatch.delattr(os, "fork")
    without = cli("upgrade", old, new, "--format", "json")
    assert (without.exit_code, without.stdout, without.stderr) == (1, with_fork.stdout, with_fork.stderr)
