"""``diff --base REF`` diffs what the patch set at REF builds against what the working tree's builds,
reading REF from the object database: the checkout, the index and HEAD are left alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixtures_cli import MANIFEST, applied_folder, context_files, needs_patch, patch_p1
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_ZIP


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A checkout whose patches/ has two commits: the bundled set, then small_max 8192 -> 4096."""
    git = pytest.importorskip("git")
    repo_dir = tmp_path / "repo"
    shutil.copytree(PATCHES, repo_dir / "patches")
    shutil.copytree(ROOT / "templates", repo_dir / "templates")
    repo = git.Repo.init(repo_dir)
    actor = git.Actor("test", "test@localhost")
    repo.index.add(["patches", "templates"])
    repo.index.commit("the bundled patch set", author=actor, committer=actor)
    toml = repo_dir / "patches" / "three-tier-decode.toml"
    text = toml.read_text()
    assert "default = 8192" in text
    toml.write_text(text.replace("default = 8192", "default = 4096"))
    repo.index.add(["patches/three-tier-decode.toml"])
    repo.index.commit("decode with V1 up to 4096 tokens", author=actor, committer=actor)
    return repo_dir


@needs_patch
def test_base_diff_shows_what_a_patch_change_does_and_takes_one_output_to_the_other(  # type: ignore[no-untyped-def]
        cli, history, applied) -> None:
    import git

    repo = git.Repo(history)
    template = history / "templates" / "three-tier-decode" / "dispatch.py.j2"
    template.write_text(template.read_text().replace("# Run PagedAttention V1.", "# Run the V1 kernel."))
    repo.index.add([str(template.relative_to(history))])  # staged, not committed: part of the working tree
    head, status = repo.head.commit.hexsha, repo.git.status("--porcelain")
    result = cli("diff", "--base", "HEAD~1", "--patches", history / "patches", VENDOR_ZIP)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"# patch set at HEAD~1 ({repo.commit('HEAD~1').hexsha[:12]}) -> working tree"
    removed = [line for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert any("actual_max > 8192" in line for line in removed)  # the committed parameter change
    assert any("actual_max > 4096" in line for line in added)
    assert "+            # Run the V1 kernel." in lines  # the template change in the working tree
    assert f"--- a/{SHIPPED}" in lines and "--- a/paged_attn.py" in lines
    # Reading HEAD~1 left the working tree, the index and HEAD alone.
    assert (repo.head.commit.hexsha, repo.git.status("--porcelain")) == (head, status)
    # HEAD~1's patch set is the bundled one: the diff takes its output to the working tree's.
    new = applied_folder(cli, VENDOR_ZIP, "new", "--patches", str(history / "patches"))
    (new / MANIFEST).unlink()
    old = cli.cwd / "old"
    for path, (data, executable) in applied.items():
        (old / path).parent.mkdir(parents=True, exist_ok=True)
        (old / path).write_bytes(data)
        (old / path).chmod(0o755 if executable else 0o644)
    patch_p1(old, result.stdout_bytes)
    assert context_files(old) == context_files(new)


def test_base_at_head_is_an_empty_diff(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    import git

    result = cli("diff", "--exit-code", "--base", "HEAD", "--patches", history / "patches", vendor_zip)
    head = git.Repo(history).head.commit.hexsha[:12]
    assert (result.exit_code, result.stdout) == (0, f"# patch set at HEAD ({head}) -> working tree\n")


def test_a_bad_ref_is_one_error_line(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--base", "no-such-ref", "--patches", history / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr == (f"error: {history}: unknown revision 'no-such-ref' (name a commit, branch or tag of "
                             "this repository ('git log --oneline' lists them))\n")


def test_a_revision_before_the_patch_set_existed_is_one_error_line(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    git = pytest.importorskip("git")
    checkout = tmp_path / "engine"
    repo = git.Repo.init(checkout)
    actor = git.Actor("t", "t@localhost")
    (checkout / "README").write_text("the team's engine\n")
    repo.index.add(["README"])
    first = repo.index.commit("the engine, before any patch set", author=actor, committer=actor)
    shutil.copytree(PATCHES, checkout / "patches")
    shutil.copytree(ROOT / "templates", checkout / "templates")
    repo.index.add(["patches", "templates"])
    repo.index.commit("the patch set", author=actor, committer=actor)
    result = cli("diff", "--base", "HEAD~1", "--patches", checkout / "patches", vendor_zip)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"error: {checkout.resolve()}: 'patches' does not exist at HEAD~1 "
                             f"({first.hexsha[:12]}) (pick a commit that has the patch set)\n")


def test_a_broken_patch_set_at_the_revision_is_named_by_the_revision(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    import git

    repo = git.Repo(history)
    repo.index.remove(["patches/series"])
    repo.index.commit("lose the series", author=git.Actor("t", "t@localhost"), committer=git.Actor("t", "t@localhost"))
    assert (history / "patches" / "series").is_file()  # still in the working tree
    result = cli("diff", "--base", "HEAD", "--patches", history / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stderr == (f"error: the patch set at HEAD ({repo.head.commit.hexsha[:12]}): patches: "
                             "no 'series' file listing the patches in order (is this a patch set folder?)\n")


def test_a_patch_set_outside_a_repository_is_one_error_line(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(PATCHES, tmp_path / "loose" / "patches")
    shutil.copytree(ROOT / "templates", tmp_path / "loose" / "templates")
    result = cli("diff", "--base", "HEAD", "--patches", tmp_path / "loose" / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not in a git repository" in result.stderr


def test_a_patch_set_linked_into_a_repository_from_outside_is_one_error_line(  # type: ignore[no-untyped-def]
        cli, vendor_zip, history, tmp_path) -> None:
    # The link is in the checkout, the files it names are not: their history is not this repository's.
    shutil.copytree(PATCHES, tmp_path / "elsewhere" / "patches")
    (history / "linked").symlink_to(tmp_path / "elsewhere" / "patches", target_is_directory=True)
    result = cli("diff", "--base", "HEAD", "--patches", history / "linked", vendor_zip)
    assert result.exit_code == 2
    assert result.stderr == (f"error: {history / 'linked'}: not inside the repository at {history.resolve()}\n")


def test_per_patch_and_base_do_not_combine(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--per-patch", "--base", "HEAD", vendor_zip)
    assert result.exit_code == 2 and "cannot be combined" in result.stderr


def test_the_patch_set_at_a_revision_is_written_with_its_templates_and_removed_after(history: Path) -> None:
    from patcher.errors import PatchSetError
    from patcher.review.base import patch_set_at

    head = (history / "patches" / "three-tier-decode.toml").read_text()
    with patch_set_at(history / "patches", "HEAD~1") as checkout:
        assert checkout.folder == checkout.scratch / "patches"
        assert checkout.ref.ref == "HEAD~1" and len(checkout.ref.commit) == 40
        assert "default = 8192" in (checkout.folder / "three-tier-decode.toml").read_text()
        assert (checkout.scratch / "templates" / "three-tier-decode").is_dir()
        scratch = checkout.scratch
        # An error about a file of the copy names it by its place in the patch set, and the revision.
        error = checkout.explain(PatchSetError("unknown key 'x'", where=f"{scratch}/patches/three-tier-decode.toml",
                                               hint="see the README"))
        assert type(error) is PatchSetError
        assert str(error) == (f"the patch set at HEAD~1 ({checkout.ref.commit[:12]}): "
                              "patches/three-tier-decode.toml: unknown key 'x' (see the README)")
    assert not scratch.exists()
    assert (history / "patches" / "three-tier-decode.toml").read_text() == head  # the checkout is left alone


# The change is to the text, never to the mode: both patch sets write the file with the mode the input gives it.
def test_base_diff_of_an_executable_target_changes_no_mode(cli, history, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).chmod(0o755)
    result = cli("diff", "--base", "HEAD~1", "--patches", history / "patches", vendor_copy)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index(f"diff --git a/{SHIPPED} b/{SHIPPED}")
    assert lines[start + 1:start + 3] == [f"--- a/{SHIPPED}", f"+++ b/{SHIPPED}"]
    assert not [line for line in lines if line.startswith(("old mode", "new mode"))]
    out = cli.cwd / "out"
    assert cli("apply", vendor_copy, "-o", out, "--patches", history / "patches").exit_code == 0
    assert context_files(out)[SHIPPED][1] is True  # what apply writes keeps the mode the diff says
