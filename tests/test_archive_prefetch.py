"""Reading ahead while patching: the same bytes, within the budget, and never a different error."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.prefetch import Prefetch
from patcher.cli.options import load_patches
from patcher.errors import BadArchive
from patcher.manifest import render_manifest
from patcher.pipeline import build, prefetch_unchanged, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_each_file_comes_back_with_the_bytes_the_tree_reads(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree, Prefetch(tree, tree.files()) as prefetch:
        for item in tree.files():
            stream = prefetch.open(item.path)
            assert stream is not None, item.path
            assert stream.read() == tree.read(item.path)
            assert prefetch.open(item.path) is None  # handed over once, then dropped


def test_a_path_it_was_not_asked_for_is_left_to_the_tree(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        files = tree.files()
        with Prefetch(tree, files[1:]) as prefetch:
            assert prefetch.open(files[0].path) is None
            assert prefetch.open("no/such/file") is None


def test_files_past_the_budget_are_not_held(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        files = sorted(tree.files(), key=lambda f: f.path)
        budget = files[0].size + files[1].size  # the first two fit, the third does not
        assert files[2].size > 0
        with Prefetch(tree, files, budget=budget) as prefetch:
            assert [prefetch.open(f.path) is not None for f in files[:4]] == [True, True, False, False]


def test_after_close_nothing_is_handed_over(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        prefetch = Prefetch(tree, tree.files())
        with prefetch:
            pass  # closed at once, however far the thread got
        assert all(prefetch.open(f.path) is None for f in tree.files())


def test_a_corrupt_member_stops_the_thread_and_the_reader_meets_the_error_itself() -> None:
    with open_source(FIXTURES / "bad" / "bad_crc.zip") as tree:
        broken = next(f for f in tree.files() if f.path.endswith("scripts/data.txt"))
        with Prefetch(tree, tree.files()) as prefetch:
            assert prefetch.open(broken.path) is None
            later = [f for f in tree.files() if f.path > broken.path]
            assert all(prefetch.open(f.path) is None for f in later)
        with pytest.raises(BadArchive, match="fails its CRC check"):
            tree.read(broken.path)


@pytest.mark.parametrize("budget", [0, 40_000, 1 << 30])
def test_the_written_context_is_the_same_byte_for_byte(vendor_zip: Path, tmp_path: Path, budget: int) -> None:
    patch_set = load_patches(None, ())
    with open_source(vendor_zip) as tree:
        result = build(tree, patch_set)
        manifest = render_manifest(result, vendor_zip.name)
        plain = write(result, tmp_path / "plain.tar.gz", manifest)
        with Prefetch(tree, tree.files(), budget=budget) as prefetch:
            ahead = write(result, tmp_path / "ahead.tar.gz", manifest, prefetch=prefetch)
            # The writer took every unchanged file the thread held: none is left to hand over.
            assert result.changes and all(prefetch.open(f.path) is None for f in tree.files()
                                          if f.path not in result.changes)
    assert ahead == plain == hashlib.sha256((tmp_path / "ahead.tar.gz").read_bytes()).hexdigest()
    with tarfile.open(tmp_path / "ahead.tar.gz") as archive:
        assert "qwen3_6_scripts/paged_attn.py" in archive.getnames()


def test_the_pipeline_reads_ahead_every_file_of_the_tree(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree, prefetch_unchanged(tree) as prefetch:
        for item in tree.files():
            assert prefetch.open(item.path) is not None, item.path
