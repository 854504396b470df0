"""The patch set's commit as the manifest records it: '<sha>', '<sha>-dirty', or None outside git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from patcher.vcs import describe_commit
from tests.fixtures_patches import commit_all, git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "patches").mkdir(parents=True)
    (root / "patches" / "series").write_text("a\n")
    (root / "README").write_text("hello\n")
    git(root, "init", "-q")
    commit_all(root, "one")
    return root


def test_outside_git_or_before_the_first_commit_there_is_none(tmp_path: Path) -> None:
    assert describe_commit(tmp_path) is None
    git(tmp_path, "init", "-q")
    assert describe_commit(tmp_path) is None


def test_clean_then_dirty_by_edit_stage_or_new_file(repo: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD").strip()
    patches = repo / "patches"
    assert describe_commit(patches) == sha
    (repo / "README").write_text("changed outside the patch set\n")
    assert describe_commit(patches) == sha
    (patches / "series").write_text("b\n")
    assert describe_commit(patches) == f"{sha}-dirty"
    git(repo, "add", ".")
    assert describe_commit(patches) == f"{sha}-dirty"
    git(repo, "reset", "-q", "--hard")
    (patches / "new.toml").write_text("id = 'new'\n")
    assert describe_commit(patches) == f"{sha}-dirty"
