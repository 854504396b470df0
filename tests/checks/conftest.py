"""Fixtures of the safety rules' tests; the builders they share with other folders are in ``tests/fixtures_rules.py``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def rule_cache(hermetic_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Turn the rule cache on, whatever the environment says, in this test's own folder; return its ``checks/``."""
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    return hermetic_cache / "checks"
