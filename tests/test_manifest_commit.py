"""The manifest's ``commit``: the patch set's commit, or null with a ``commit_reason``, never a silent null.

Outside git the manifest records ``"commit": null`` with the reason "not in
a git repository", quietly: that is expected. Every other way of not
reading it (git refusing a repository of another owner, no git, no file
descriptor left to run it, a broken HEAD or object) is one warning line on
stderr and the same null with what went wrong and what to do.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from patcher.vcs import NOT_IN_GIT, CommitRead, read_commit
from tests.fixtures_patches import commit_all, copy_patch_set, git
from tests.fixtures_vendor import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.fixture
def patch_repo(tmp_path: Path) -> Path:
    """The bundled patch set and its templates, committed in a repository of their own; returns its patches/."""
    root = tmp_path / "series-repo"
    patches = copy_patch_set(root)
    git(root, "init", "-q")
    commit_all(root, "the patch set")
    return patches


def _head_ref(repo: Path) -> Path:
    return repo / ".git" / (repo / ".git" / "HEAD").read_text().split("ref: ", 1)[1].strip()


# --- what git can and cannot say -------------------------------------------------------------


def test_a_clean_checkout_gives_its_commit_and_no_reason(patch_repo: Path) -> None:
    assert read_commit(patch_repo) == CommitRead(git(patch_repo, "rev-parse", "HEAD").strip(), None)


def test_outside_git_there_is_no_commit_and_the_reason_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "patches"
    folder.mkdir()
    found = read_commit(folder)
    assert (found.commit, found.reason) == (None, NOT_IN_GIT)


def test_a_repository_git_refuses_for_its_owner_names_ownership_and_safe_directory(
    patch_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git's own switch for "owned by someone else": the refusal is git's, for real.
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
    found = read_commit(patch_repo)
    assert found.commit is None and found.reason is not None
    assert "dubious ownership" in found.reason
    assert f"git config --global --add safe.directory {patch_repo.parent}" in found.reason


def test_without_git_on_path_the_reason_says_to_install_it(patch_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    empty = tmp_path / "no-programs"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    found = read_commit(patch_repo)
    assert (found.commit, found.reason) == (None, "git is not installed (install git, or put it on PATH)")


def test_a_garbled_head_file_is_not_taken_for_being_outside_git(patch_repo: Path) -> None:
    (patch_repo.parent / ".git" / "HEAD").write_text("garbage\n")
    found = read_commit(patch_repo)
    assert found.commit is None
    assert found.reason == (f"git does not take {patch_repo.parent.resolve() / '.git'} for a repository "
                            "(check its HEAD and config: git fsck)")


def test_a_branch_pointing_at_a_missing_commit_says_head_names_no_commit(patch_repo: Path) -> None:
    _head_ref(patch_repo.parent).write_text("1" * 40 + "\n")
    found = read_commit(patch_repo)
    assert found.commit is None and found.reason is not None
    assert found.reason.startswith("HEAD names no commit")


def test_a_repository_without_commits_says_head_names_no_commit(tmp_path: Path) -> None:
    folder = tmp_path / "patches"
    folder.mkdir()
    git(tmp_path, "init", "-q")
    found = read_commit(folder)
    assert found.commit is None and found.reason is not None and found.reason.startswith("HEAD names no commit")


def test_a_corrupt_object_is_named_from_gits_own_words(patch_repo: Path) -> None:
    repo = patch_repo.parent
    sha = git(repo, "rev-parse", "HEAD").strip()
    loose = repo / ".git" / "objects" / sha[:2] / sha[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not zlib at all")
    found = read_commit(patch_repo)
    assert found.commit is None and found.reason is not None
    assert found.reason.startswith("git fails in the repository: ") and "corrupt" in found.reason
    assert found.reason.endswith("(check it with git fsck)")


_NO_DESCRIPTORS = """
import json, os, resource, sys
from pathlib import Path
from patcher.vcs import read_commit
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
found = read_commit(Path(sys.argv[1]))
for fd in held:
    os.close(fd)
print(json.dumps([found.commit, found.reason]))
"""


def test_no_file_descriptor_left_to_run_git_says_so(patch_repo: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _NO_DESCRIPTORS, str(patch_repo)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert json.loads(done.stdout) == [None, "cannot run git: Too many open files (raise the open-file limit: ulimit -n)"]


def test_descriptors_running_out_between_the_two_git_calls_say_so(patch_repo: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # HEAD was read; the second call (git status, for "-dirty") cannot start.
    from patcher import vcs

    real = subprocess.run

    def run(args: list[str], **kwargs: Any) -> Any:
        if "status" in args:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real(args, **kwargs)

    monkeypatch.setattr(vcs.subprocess, "run", run)
    assert read_commit(patch_repo) == CommitRead(
        None, f"cannot run git: {os.strerror(errno.EMFILE)} (raise the open-file limit: ulimit -n)")


# --- what apply records and says -------------------------------------------------------------


def _manifest(output: Path) -> dict[str, Any]:
    with tarfile.open(output) as archive:
        member = archive.extractfile("patcher-manifest.json")
        assert member is not None
        loaded: dict[str, Any] = json.loads(member.read())
    return loaded


def test_apply_records_the_commit_of_a_clean_patch_set_and_says_nothing(cli: Any, vendor_zip: Path,
                                                                        patch_repo: Path) -> None:
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patch_repo)
    assert result.exit_code == 0, result.stderr
    assert "commit" not in result.stderr
    assert _manifest(cli.cwd / "ctx.tar.gz")["patch_set"] == {
        "series": ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"],
        "commit": git(patch_repo, "rev-parse", "HEAD").strip(), "commit_reason": None}


def test_apply_outside_git_records_null_and_why_without_a_warning(cli: Any, vendor_zip: Path, tmp_path: Path) -> None:
    loose = copy_patch_set(tmp_path / "loose")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", loose)
    assert result.exit_code == 0, result.stderr
    assert "commit" not in result.stderr
    patch_set = _manifest(cli.cwd / "ctx.tar.gz")["patch_set"]
    assert (patch_set["commit"], patch_set["commit_reason"]) == (None, "not in a git repository")


def test_apply_on_a_refused_repository_warns_once_and_records_null_and_why(
    cli: Any, vendor_zip: Path, patch_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patch_repo)
    assert result.exit_code == 0, result.stderr
    reason = _manifest(cli.cwd / "ctx.tar.gz")["patch_set"]["commit_reason"]
    assert "dubious ownership" in reason
    warnings = [line for line in result.stderr.splitlines() if '"commit": null' in line]
    assert warnings == [f'warning: {patch_repo}: the manifest records "commit": null: {reason}']
