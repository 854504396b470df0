"""``patcher apply --record-git DIR``: the run as a reproducible git history.

One commit for the vendor tree, then one per applied patch.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fixtures_cli import MANIFEST, SERIES
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE, VENDOR_ZIP

git = pytest.importorskip("git")


def _tree_files(commit) -> dict[str, tuple[bytes, int]]:  # type: ignore[no-untyped-def]
    return {b.path: (b.data_stream.read(), b.mode) for b in commit.tree.traverse() if b.type == "blob"}


def _folder_files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), 0o100755 if p.stat().st_mode & 0o100 else 0o100644)
            for p in folder.rglob("*") if p.is_file() and ".git" not in p.relative_to(folder).parts}


@pytest.fixture(scope="module")
def recorded(shared_cache, tmp_path_factory):  # type: ignore[no-untyped-def]
    """One recorded run of the demo zip, into a folder that exists and is empty."""
    from patcher.cli import main

    work = tmp_path_factory.mktemp("recorded")
    (work / "history").mkdir()
    result = CliRunner().invoke(main, ["apply", str(VENDOR_ZIP), "-o", str(work / "out"),
                                       "--record-git", str(work / "history")], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result, git.Repo(work / "history"), work / "out"


def test_one_commit_for_the_vendor_tree_then_one_per_applied_patch(recorded, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset import load_patch_set

    result, repo, _ = recorded
    assert result.stderr.startswith("recorded 5 commits in ")
    commits = list(reversed(list(repo.iter_commits("main"))))
    digest = hashlib.sha256(vendor_zip.read_bytes()).hexdigest()
    assert commits[0].message.startswith(f"Unpack {vendor_zip.name}\n")
    assert f"sha256: {digest}\n" in commits[0].message
    patches = {p.id: p for p in load_patch_set(PATCHES, templates=PATCHES.parent / "templates").patches}
    for commit, patch_id in zip(commits[1:4], SERIES):
        header = patches[patch_id].header()
        assert commit.summary == patches[patch_id].summary
        assert commit.message.replace("\n\n\n", "\n\n") == header.replace("\n\n\n", "\n\n")
        assert f"\nPatch: {patch_id}\n" in commit.message
        assert list(commit.stats.files) == [SHIPPED]
    assert commits[4].summary.startswith("Sync stale copies with the shipped files")
    assert set(commits[4].stats.files) == {"paged_attn.py", MANIFEST}


def test_the_first_commit_is_the_vendor_tree_byte_for_byte(recorded) -> None:  # type: ignore[no-untyped-def]
    _, repo, _ = recorded
    first = next(c for c in repo.iter_commits("main") if not c.parents)
    files = _tree_files(first)
    assert files == _folder_files(VENDOR_TREE)
    assert files["Dockerfile"][0].count(b"\r\n") == 4  # CRLF kept: no autocrlf, no filters
    assert files["qwen3_6_scripts/patch_ops.sh"][1] == 0o100755


def test_the_last_commit_is_what_apply_wrote(recorded) -> None:  # type: ignore[no-untyped-def]
    _, repo, output = recorded
    assert _tree_files(repo.head.commit) == _folder_files(output)
    assert not repo.is_dirty(untracked_files=True)
    assert repo.active_branch.name == "main"


def test_git_log_p_reads_the_series(recorded) -> None:  # type: ignore[no-untyped-def]
    _, repo, _ = recorded
    log = repo.git.log("-p", "--reverse", "--format=%s", "main", "--", SHIPPED)
    assert log.index("Decode in three tiers") < log.index("+        use_v2 = actual_max > 8192") < log.index(
        "Gather the prefill context K/V in groups of tiles")


def test_the_history_is_reproducible(cli, vendor_zip, recorded, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert cli("apply", vendor_zip, "-o", "out", "--record-git", "again").exit_code == 0
    commit = git.Repo(cli.cwd / "again").head.commit
    assert commit.hexsha == recorded[1].head.commit.hexsha
    assert (commit.author.name, commit.author.email) == ("patcher", "patcher@localhost")
    assert (commit.committer.name, commit.committer.email) == ("patcher", "patcher@localhost")
    assert commit.authored_date == commit.committed_date == 315532800  # 1980-01-01
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert cli("apply", vendor_zip, "-o", "out-c", "--record-git", "c").exit_code == 0
    dated = git.Repo(cli.cwd / "c").head.commit
    assert dated.committed_date == 1700000000 and dated.hexsha != commit.hexsha


def test_a_non_empty_dir_is_refused_unless_forced(cli, vendor_zip, recorded) -> None:  # type: ignore[no-untyped-def]
    taken = cli.cwd / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    result = cli("apply", vendor_zip, "-o", "out", "--record-git", taken)
    assert result.exit_code == 2
    assert result.stderr == (f"error: {taken}: already exists and is not an empty folder "
                             "(pick another folder, or pass --force to replace it)\n")
    assert not (cli.cwd / "out").exists() and (taken / "notes.txt").read_text() == "mine"
    result = cli("apply", vendor_zip, "-o", "out", "--force", "--record-git", taken)
    assert result.exit_code == 0, result.stderr
    assert not (taken / "notes.txt").exists()
    assert git.Repo(taken).head.commit.hexsha == recorded[1].head.commit.hexsha
    assert not [p for p in cli.cwd.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_already_applied_patches_get_no_commit(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", "patched").exit_code == 0
    result = cli("apply", cli.cwd / "patched", "-o", "again", "--record-git", "history")
    assert result.exit_code == 0, result.stderr
    summaries = [c.summary for c in git.Repo(cli.cwd / "history").iter_commits("main")]
    assert len(summaries) == 2 and summaries[1] == "Unpack patched"
    assert "sha256: none (read from a folder, not a zip)" in git.Repo(cli.cwd / "history").commit("main~1").message


def test_the_vendors_gitattributes_do_not_rewrite_line_endings(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / ".gitattributes").write_text("* text eol=lf\n")
    source = make_zip(vendor_copy)
    assert cli("apply", source, "-o", "out", "--record-git", "history").exit_code == 0
    first = next(c for c in git.Repo(cli.cwd / "history").iter_commits("main") if not c.parents)
    assert _tree_files(first)["Dockerfile"][0] == (VENDOR_TREE / "Dockerfile").read_bytes()


def test_a_vendor_tree_holding_git_files_is_refused_and_nothing_is_written(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # A '.git/' in the drop would be written over the recorded repository's own files (hooks, config).
    (vendor_copy / ".git").mkdir()
    (vendor_copy / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/owned\n")
    source = make_zip(vendor_copy)
    result = cli("apply", source, "-o", "out", "--record-git", "history")
    assert result.exit_code == 2
    assert result.stderr == ("error: history: the tree holds '.git/config', which would overwrite "
                             "the repository's own files\n")
    assert not (cli.cwd / "history").exists() and not (cli.cwd / "out").exists()
    assert not [p for p in cli.cwd.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_a_later_commit_writing_into_git_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    # Each commit's files are checked, not only the first tree's: a hook written by a later step is refused too.
    from patcher.archive.layout import OutputFile
    from patcher.vcs import GitError, Snapshot, record_history

    first = Snapshot("first\n", (OutputFile("README", False, data=b"hello\n"),))
    hook = Snapshot("hook\n", (OutputFile(".git/hooks/post-commit", True, data=b"#!/bin/sh\ntouch owned\n"),))
    with pytest.raises(GitError, match="the tree holds '.git/hooks/post-commit'"):
        record_history(tmp_path / "history", [first, hook], date=315532800)
    assert list(tmp_path.iterdir()) == []


# -- the commits, as values (history.snapshots) ----------------------------------------------------


def test_the_snapshots_are_the_tree_each_applied_patch_then_the_sync_with_what_it_adds(bundled, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from patcher.review.history import snapshots

    (vendor_copy / "Dockerfile").write_text("FROM base:1\nWORKDIR /workspace\nCOPY . /workspace\n"
                                            "RUN cd ./qwen3_6_scripts && ./patch_ops.sh\n")
    (vendor_copy / SHIPPED).chmod(0o755)  # a mode the commits must keep
    tree = DirSource(vendor_copy)
    run = build(tree, bundled)
    unpack, *steps, sync = snapshots(run, b'{"manifest": 1}\n', "drop-folder")
    assert unpack.message == ("Unpack drop-folder\n\nThe vendor tree as unpacked, before any patch.\n"
                              "sha256: none (read from a folder, not a zip)\n")
    assert {f.path: (f.executable, f.source().read()) for f in unpack.files} == {
        item.path: (item.executable, tree.read(item.path)) for item in tree.files()}
    assert [s.message for s in steps] == [p.header() for p in bundled.patches]
    assert [[(f.path, f.executable) for f in s.files] for s in steps] == [[(SHIPPED, True)]] * 3
    assert steps[-1].files[0].data == run.changes[SHIPPED]
    assert sync.message == (f"Sync stale copies with the shipped files; write {MANIFEST}\n\n"
                            f"paged_attn.py: made identical to {SHIPPED}\n"
                            f".dockerignore: keeps {MANIFEST} out of the image\n")
    assert [(f.path, f.executable, f.data) for f in sync.files] == [
        ("paged_attn.py", False, run.changes[SHIPPED]), (".dockerignore", False, run.changes[".dockerignore"]),
        (MANIFEST, False, b'{"manifest": 1}\n')]


def test_a_patch_that_does_not_apply_gets_no_commit_and_an_unchanged_mirror_no_line(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from patcher.review.history import snapshots
    from tests.fixtures_cli import broken_drop

    folder = broken_drop(tmp_path, "no-longer-applies")
    shutil.copyfile(folder / SHIPPED, folder / "paged_attn.py")  # in sync before: patched, it drifts
    run = build(DirSource(folder), bundled)
    _, *steps, sync = snapshots(run, b"{}", "drop")
    assert [s.message.split("\n")[0] for s in steps] == [p.summary for p in bundled.patches[1:]]
    assert sync.message.endswith(f"\n\npaged_attn.py: made identical to {SHIPPED}\n")
    unchanged = build(DirSource(folder), bundled.__class__(bundled.directory, ()))
    _, sync = snapshots(unchanged, b"{}", "drop")
    assert sync.message == f"Sync stale copies with the shipped files; write {MANIFEST}\n\n"
    assert [f.path for f in sync.files] == [MANIFEST]
