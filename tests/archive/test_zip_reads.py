"""A good zip reads back its exact bytes and modes in place; the zip is never modified."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.zip_source import ZipSource
from tests.fixtures_archives import DOCKERFILE, PAGED, TOP, corpus, corpus_zip


def test_valid_zip_reads_exact_bytes(small_vendor_zip: Path) -> None:
    with open_source(small_vendor_zip) as tree:
        assert tree.read("Dockerfile") == DOCKERFILE  # CRLF kept
        with tree.open("qwen3_6_scripts/paged_attn.py") as stream:
            assert stream.read(6) == b"import"
            assert stream.read() == PAGED[6:]
        assert tree.exists("qwen3_6_scripts/patch_ops.sh")
        assert not tree.exists("qwen3_6_scripts")  # folders are not files
        assert not tree.exists("enginex-demo-main/Dockerfile")


def test_unknown_paths_raise_key_error(small_vendor_zip: Path) -> None:
    with open_source(small_vendor_zip) as tree:
        for path in ("missing.py", "../enginex-demo-main/Dockerfile", "qwen3_6_scripts"):
            with pytest.raises(KeyError):
                tree.read(path)
            assert not tree.exists(path)


def test_sha256_is_of_the_zip_file_which_is_left_untouched(small_vendor_zip: Path) -> None:
    before = small_vendor_zip.read_bytes()
    mtime = small_vendor_zip.stat().st_mtime_ns
    with open_source(small_vendor_zip) as tree:
        for item in tree.files():
            tree.read(item.path)
        assert tree.sha256() == hashlib.sha256(before).hexdigest()
    assert small_vendor_zip.read_bytes() == before
    assert small_vendor_zip.stat().st_mtime_ns == mtime


def test_any_execute_bit_makes_a_file_executable_and_write_bits_do_not(tmp_path: Path) -> None:
    modes = {"rw-all.sh": 0o666, "owner-x.sh": 0o744, "group-x.sh": 0o654, "other-x.sh": 0o645}
    extra = [corpus.Member(TOP + f"scripts/{name}", corpus.SCRIPT, stat.S_IFREG | mode) for name, mode in modes.items()]
    with ZipSource(corpus_zip(tmp_path / "v.zip", *extra)) as source:
        executable = {f.path: f.executable for f in source.files()}
    assert {name: executable[f"scripts/{name}"] for name in modes} == {
        "rw-all.sh": False,
        "owner-x.sh": True,
        "group-x.sh": True,
        "other-x.sh": True,
    }
