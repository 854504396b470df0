"""apply reads ahead every file of the tree while it patches; the context it writes is the same."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.prefetch import Prefetch
from patcher.cli.options import load_patches
from patcher.manifest import render_manifest
from patcher.pipeline import build, prefetch_unchanged, write


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
