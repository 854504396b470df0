"""A folder lists and reads like the zip of the same tree.

Files sorted, with their sizes and execute bits; links inside the tree read as the files they
point to; .git and empty folders left out.
"""

from __future__ import annotations

from pathlib import Path

from patcher.archive import DirSource, SourceFile, open_source
from tests.fixtures_archives import FOLDER_VENDOR, PATCH_OPS, bare_tree, corpus, small_tree


def test_folder_reads_like_the_zip(tmp_path: Path, small_vendor_zip: Path) -> None:
    ctx = small_tree(tmp_path / "tree")
    (ctx / ".git").mkdir()
    (ctx / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    with open_source(small_vendor_zip) as zipped, open_source(ctx) as folder:
        assert isinstance(folder, DirSource)
        assert folder.files() == zipped.files()
        for item in folder.files():
            assert folder.read(item.path) == zipped.read(item.path)
        assert folder.sha256() is None
        assert folder.label == str(ctx)


def test_folder_symlink_inside_the_tree_reads_as_a_file(tmp_path: Path) -> None:
    ctx = small_tree(tmp_path)
    (ctx / "link.sh").symlink_to("qwen3_6_scripts/patch_ops.sh")
    with open_source(ctx) as tree:
        assert SourceFile("link.sh", len(PATCH_OPS), True) in tree.files()
        assert tree.read("link.sh") == PATCH_OPS


def test_a_folder_lists_its_files_sorted_with_sizes_and_modes_ignoring_git(tmp_path: Path) -> None:
    ctx = bare_tree(tmp_path)
    (ctx / ".git").mkdir()
    (ctx / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ctx / "qwen3_6_scripts" / "run.sh").symlink_to("patch_ops.sh")
    (ctx / "empty").mkdir()
    with DirSource(ctx) as tree:
        assert tree.root == ctx
        assert [(f.path, f.size, f.executable) for f in tree.files()] == [
            ("Dockerfile", len(corpus.DOCKERFILE), False),
            ("qwen3_6_scripts/paged_attn.py", 13, False),
            ("qwen3_6_scripts/patch_ops.sh", 47, True),
            ("qwen3_6_scripts/run.sh", 47, True),
            ("vllm/attention/ops/paged_attn.py", 11, False),
        ]
        assert tree.read("qwen3_6_scripts/run.sh") == FOLDER_VENDOR["qwen3_6_scripts/patch_ops.sh"]
        assert not tree.exists(".git/HEAD") and not tree.exists("empty")


def test_a_folder_file_is_executable_by_any_execute_bit_linked_or_not(tmp_path: Path) -> None:
    ctx = bare_tree(tmp_path)
    modes = {"rw-all.sh": 0o666, "group-x.sh": 0o654, "other-x.sh": 0o645, "plain.py": 0o644}
    for name, mode in modes.items():
        (ctx / name).write_bytes(b"echo\n")
        (ctx / name).chmod(mode)
        (ctx / f"link-{name}").symlink_to(name)
    with DirSource(ctx) as tree:
        executable = {f.path: f.executable for f in tree.files()}
    want = {"rw-all.sh": False, "group-x.sh": True, "other-x.sh": True, "plain.py": False}
    assert {name: executable[name] for name in modes} == want
    assert {name: executable[f"link-{name}"] for name in modes} == want
