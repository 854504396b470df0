"""Fixtures of the CLI tests: a one-patch set that applies to the bad-archive corpus's base tree, and a
terminal and a clock for what the CLI draws only on a terminal, only after a while."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from tests.fixtures_patches import patch_toml, replace_step, write_patch_set

TINY_PATCH = patch_toml("raise-level", replace_step("LEVEL = 1", "LEVEL = 2"), scope="", target="scripts/tool.py",
                        header='applied-when = ["LEVEL = 2"]', description="Raise the level")


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
    return write_patch_set(tmp_path / "tiny", {"raise-level.toml": TINY_PATCH})


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
