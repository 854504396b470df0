"""Fixtures of the archive tests; the builders they use are in tests/fixtures_archives.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_archives import small_zip


@pytest.fixture
def small_vendor_zip(tmp_path: Path) -> Path:
    """A small vendor-shaped zip (Dockerfile, scripts, stale root copy) built in tmp_path."""
    return small_zip(tmp_path / "enginex-demo-main.zip")
