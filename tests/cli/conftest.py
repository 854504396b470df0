"""Fixtures of the CLI tests: a one-patch set that applies to the bad-archive corpus's base tree."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY_PATCH = '''
id = "raise-level"
description = "Raise the level"
origin = "test"
last-update = "2026-11-29"
target = "scripts/tool.py"
scope = ""
applied-when = ["LEVEL = 2"]

[[steps]]
op = "replace"
pattern = "LEVEL = 1"
code = "LEVEL = 2"
'''


@pytest.fixture
def tiny_patches(tmp_path: Path) -> Path:
    """A one-patch set that applies to the corpus's base tree."""
    folder = tmp_path / "tiny" / "patches"
    folder.mkdir(parents=True)
    (folder / "series").write_text("raise-level.toml\n")
    (folder / "raise-level.toml").write_text(TINY_PATCH)
    return folder
