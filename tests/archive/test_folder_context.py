"""The build context of a folder is the one folder holding a Dockerfile, found below the folder given."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.archive import DirSource, open_source
from patcher.errors import BadArchive
from tests.fixtures_archives import bare_tree, small_tree


def test_folder_above_the_context_finds_it(tmp_path: Path) -> None:
    small_tree(tmp_path / "tree")
    (tmp_path / "tree" / "notes.txt").write_text("beside the context\n")
    with open_source(tmp_path / "tree") as tree:
        assert isinstance(tree, DirSource)
        assert tree.root == tmp_path / "tree" / "enginex-demo-main"
        assert not tree.exists("notes.txt")


def test_folder_without_dockerfile_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(BadArchive, match="no Dockerfile found"):
        with open_source(tmp_path):
            pass


def test_folder_with_two_contexts_is_refused(tmp_path: Path) -> None:
    small_tree(tmp_path / "one")
    small_tree(tmp_path / "two")
    with pytest.raises(BadArchive, match="several candidate build contexts"):
        with open_source(tmp_path):
            pass


def test_a_folder_without_a_dockerfile_or_with_two_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "empty" / "a").mkdir(parents=True)
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "empty")
    assert str(caught.value) == (
        f"{tmp_path / 'empty'}: no Dockerfile found (the build context is the folder holding the Dockerfile)"
    )
    bare_tree(tmp_path / "two" / "one")
    bare_tree(tmp_path / "two" / "two")
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "two")
    assert str(caught.value) == (
        f"{tmp_path / 'two'}: several candidate build contexts at the same depth:"
        " 'one/enginex-demo-main/', 'two/enginex-demo-main/' (point at the folder holding the Dockerfile)"
    )
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "gone")
    assert str(caught.value) == f"{tmp_path / 'gone'}: no such folder"


def test_a_symlink_beside_the_vendor_folder_is_not_a_second_context(tmp_path: Path) -> None:
    # drops/latest -> enginex-demo-main, as a hurried engineer keeps one.
    ctx = bare_tree(tmp_path / "drops")
    (tmp_path / "drops" / "latest").symlink_to(ctx.name)
    with DirSource(tmp_path / "drops") as tree:
        assert tree.root == ctx
        assert tree.exists("qwen3_6_scripts/patch_ops.sh")
