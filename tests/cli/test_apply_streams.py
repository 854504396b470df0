"""What ``patcher apply`` prints where, and where it writes by default.

stdout holds the output's path and nothing else; the report goes to stderr.
A run that fails prints one ``error:`` line per failure (patches, then the
input's rule errors), then the report ending in "nothing written", exit 2.
Without ``-o`` the output is ``build/<input stem>.tar.gz``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest

from tests.fixtures_cli import broken_drop
from tests.fixtures_patches import commit_all, copy_patch_set, git
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE, VENDOR_ZIP

STATUS = "  {:<16} {:<22} {}"
SUMMARIES = {
    "three-tier-decode": "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch",
    "prefix-pregather": "Gather the prefill context K/V in groups of tiles, one gather per group",
    "prefix-buffer-reuse": "Reuse preallocated buffers in the prefill online-softmax update",
}


def test_a_failing_patch_prints_its_errors_then_the_report_and_writes_nothing(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    drop = broken_drop(tmp_path, "no-longer-applies")
    result = cli("apply", drop, "-o", "ctx.tar.gz", "--set", "three-tier-decode.small_max=4096")
    assert (result.exit_code, result.stdout) == (2, "")
    assert not (cli.cwd / "ctx.tar.gz").exists()
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: qwen3_6_scripts/paged_attn.py: patch three-tier-decode: step 2 (replace): ")
    assert lines[0].endswith(f" (see what the other patches still change with 'patcher diff --keep-going {drop} "
                             "--set three-tier-decode.small_max=4096', then update the patch in the patch set)")
    assert lines[1].startswith(f"error: {SHIPPED}:") and ": v2-needs-fallback: " in lines[1]
    assert lines[2:6] == [SHIPPED, STATUS.format("failed", "three-tier-decode", SUMMARIES["three-tier-decode"]),
                          STATUS.format("applied", "prefix-pregather", SUMMARIES["prefix-pregather"]),
                          STATUS.format("applied", "prefix-buffer-reuse", SUMMARIES["prefix-buffer-reuse"])]
    assert lines[6] == "2 applied, 0 already applied, 1 failed"
    assert lines[-1] == "nothing written: 1 patch failure(s) and 1 safety rule error(s) in the input as it is"
    assert all(line.startswith("warning: ") for line in lines[7:-1])


def test_a_written_context_prints_its_path_alone_on_stdout_and_its_sha256_last(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar")
    assert (result.exit_code, result.stdout) == (0, "ctx.tar\n")
    digest = hashlib.sha256((cli.cwd / "ctx.tar").read_bytes()).hexdigest()
    assert result.stderr.endswith(f"\nwrote ctx.tar\nsha256 {digest}\n")
    lines = result.stderr.splitlines()
    assert lines[:4] == [SHIPPED] + [STATUS.format("applied", p, s) for p, s in SUMMARIES.items()]
    assert "mirror paged_attn.py: differed from qwen3_6_scripts/paged_attn.py; now identical to it" in lines
    assert "3 applied, 0 already applied, 0 failed; 1 mirror(s) re-synced" in lines


# A folder may carry an archive's suffix too (an unpacked 'ctx.tar.gz'): the stem drops it all the same.
@pytest.mark.parametrize("name, stem", [("drop.zip", "drop"), ("ctx.tar.gz", "ctx"), ("ctx.tgz", "ctx"),
                                        ("ctx.tar", "ctx"), ("tree", "tree")])
def test_without_output_it_writes_build_stem_tar_gz(cli, tmp_path, name: str, stem: str) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "inputs" / name
    source.parent.mkdir()
    if name == "drop.zip":
        shutil.copyfile(VENDOR_ZIP, source)
    else:
        shutil.copytree(VENDOR_TREE, source)
    result = cli("apply", source)
    assert (result.exit_code, result.stdout) == (0, f"build/{stem}.tar.gz\n"), result.stderr
    assert [p.name for p in (cli.cwd / "build").iterdir()] == [f"{stem}.tar.gz"]


def test_the_current_folder_as_input_refuses_the_default_output_inside_it_with_a_hint_that_works(cli, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = tmp_path / "tree"
    shutil.copytree(VENDOR_TREE, tree)
    monkeypatch.chdir(tree)
    refused = cli("apply", ".")
    assert refused.exit_code == 2
    assert refused.stderr == ("error: build/context.tar.gz: is inside the input folder, which apply never modifies "
                              "(write elsewhere, e.g. -o ../context.tar.gz)\n")
    assert not (tree / "build").exists()
    hinted = cli("apply", ".", "-o", "../context.tar.gz")
    assert (hinted.exit_code, hinted.stdout) == (0, "../context.tar.gz\n"), hinted.stderr
    assert (tmp_path / "context.tar.gz").is_file()


def test_a_patch_set_whose_commit_cannot_be_read_is_warned_about_once(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    patches = copy_patch_set(tmp_path / "repo")
    outside = cli("apply", VENDOR_ZIP, "-o", "outside.tar", "--patches", patches)
    assert outside.exit_code == 0 and "warning: " + str(patches) not in outside.stderr  # not in git: said nowhere
    git(patches.parent, "init", "-q")
    uncommitted = cli("apply", VENDOR_ZIP, "-o", "uncommitted.tar", "--patches", patches)
    assert uncommitted.exit_code == 0
    assert uncommitted.stderr.splitlines()[0] == (
        f'warning: {patches}: the manifest records "commit": null: HEAD names no commit: the repository has no '
        "commit yet, or its HEAD is broken (commit the patch set)")
    commit_all(patches.parent, "patches")
    committed = cli("apply", VENDOR_ZIP, "-o", "committed.tar", "--patches", patches)
    assert committed.exit_code == 0 and "manifest records" not in committed.stderr


def test_record_git_says_how_many_commits_it_recorded_and_refuses_a_full_folder_first(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar", "--record-git", "history")
    assert (result.exit_code, result.stdout) == (0, "ctx.tar\n")
    count = subprocess.run(["git", "-C", str(cli.cwd / "history"), "rev-list", "--count", "HEAD"], check=True,
                           capture_output=True, text=True).stdout.strip()
    assert result.stderr.startswith(f"recorded {count} commits in history\n") and int(count) > 3
    again = cli("apply", VENDOR_ZIP, "-o", "again.tar", "--record-git", "history")
    assert (again.exit_code, again.stdout) == (2, "")
    assert again.stderr == ("error: history: already exists and is not an empty folder "
                            "(pick another folder, or pass --force to replace it)\n")
    assert not (cli.cwd / "again.tar").exists()
