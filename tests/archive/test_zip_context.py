"""The build context of a zip is the folder holding its shallowest Dockerfile.

Files are listed relative to it, with or without folder entries, at the zip's root or below its
top folder.
"""

from __future__ import annotations

import stat
from pathlib import Path

from patcher.archive import SourceFile, open_source
from patcher.archive.zip_source import ZipSource
from tests.fixtures_archives import DOCKERFILE, PAGED, PATCH_OPS, corpus, members_zip, vendor_members, zip_of


def test_valid_zip_lists_files_relative_to_the_context(small_vendor_zip: Path) -> None:
    with open_source(small_vendor_zip) as tree:
        assert isinstance(tree, ZipSource)
        assert tree.label == "enginex-demo-main.zip"
        assert tree.prefix == "enginex-demo-main/"
        assert tree.top == "enginex-demo-main/"
        assert list(tree.files()) == [
            SourceFile("Dockerfile", len(DOCKERFILE), False),
            SourceFile("paged_attn.py", 18, False),
            SourceFile("qwen3_6_scripts/paged_attn.py", len(PAGED), False),
            SourceFile("qwen3_6_scripts/patch_ops.sh", len(PATCH_OPS), True),
            SourceFile("vllm/attention/ops/paged_attn.py", 11, False),
        ]


def test_zip_without_folder_entries_works(tmp_path: Path) -> None:
    members = {k: v for k, v in vendor_members().items() if v is not None}
    with open_source(zip_of(tmp_path / "z.zip", members)) as tree:
        assert tree.exists("qwen3_6_scripts/paged_attn.py")


def test_dockerfile_at_the_zip_root_gives_an_empty_prefix(tmp_path: Path) -> None:
    members = {"Dockerfile": DOCKERFILE, "qwen3_6_scripts/paged_attn.py": PAGED}
    with open_source(zip_of(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert (tree.prefix, tree.top) == ("", "")
        assert [f.path for f in tree.files()] == ["Dockerfile", "qwen3_6_scripts/paged_attn.py"]


def test_the_shallowest_dockerfile_is_the_context(tmp_path: Path) -> None:
    members = vendor_members("t/")
    members["t/vllm/docker/Dockerfile"] = b"FROM other\n"
    with open_source(zip_of(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert tree.prefix == "t/"
        assert tree.exists("vllm/docker/Dockerfile")


def test_context_below_the_top_folder(tmp_path: Path) -> None:
    members = {"t/": None, "t/ctx/": None, "t/ctx/Dockerfile": DOCKERFILE, "t/ctx/a.py": b"a\n"}
    with open_source(zip_of(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert (tree.prefix, tree.top) == ("t/ctx/", "t/")
        assert [f.path for f in tree.files()] == ["Dockerfile", "a.py"]


def test_folder_entries_above_a_nested_context_are_accepted_whatever_their_names(tmp_path: Path) -> None:
    # The Dockerfile sits two folders down; the folders above it have entries
    # of their own, one of them ending in 'X'.
    top = "enginex-LINUX/"
    members = [
        corpus.Member(top),
        corpus.Member(top + "docker/"),
        corpus.Member(top + "docker/Dockerfile", corpus.DOCKERFILE),
        corpus.Member(top + "docker/run.sh", corpus.SCRIPT, stat.S_IFREG | 0o755),
    ]
    with ZipSource(members_zip(tmp_path / "v.zip", members)) as source:
        assert source.prefix == "enginex-LINUX/docker/"
        assert [(f.path, f.executable) for f in source.files()] == [("Dockerfile", False), ("run.sh", True)]
