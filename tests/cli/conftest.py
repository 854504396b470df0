"""Fixtures of the CLI tests: a one-patch set that applies to the bad-archive corpus's base tree, and a
terminal and a clock for what the CLI draws only on a terminal, only after a while."""

from __future__ import annotations

import io
import os
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


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A clock that stands at 100 seconds until a test moves ``now``."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tiny_patches(tmp_path: Path) -> Path:
    """A one-patch set that applies to the corpus's base tree."""
    folder = tmp_path / "tiny" / "patches"
    folder.mkdir(parents=True)
    (folder / "series").write_text("raise-level.toml\n")
    (folder / "raise-level.toml").write_text(TINY_PATCH)
    return folder


@pytest.fixture(autouse=True)
def children_run_unrecorded_under_mutmut_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a ``patcher`` child process run plainly while mutmut records which tests reach which code.

    mutmut's stats pass marks itself in ``MUTANT_UNDER_TEST=stats``; a child
    inheriting that tries to record too, looks for mutmut's settings in its
    own working folder (a tmp_path), fails, and so fails the test. What a
    child would record is lost anyway, and this process keeps recording
    (mutmut holds the mark in-process too); while a mutant is judged the
    variable names it and children run it as before.
    """
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        monkeypatch.delenv("MUTANT_UNDER_TEST")
