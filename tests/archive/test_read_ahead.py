"""The read-ahead hands each file it was asked for over once, with the bytes the tree reads.

It reads on a named daemon thread that close() waits for, and hands nothing over after close; a
corrupt member stops it, and the reader then meets the same error itself.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO, Sequence

import pytest

from patcher.archive import SourceFile, open_source
from patcher.archive.prefetch import Prefetch
from patcher.archive.tree import SourceTree
from patcher.errors import BadArchive
from tests.fixtures_archives import wheels_zip
from tests.fixtures_vendor import FIXTURES


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


def test_after_close_nothing_is_handed_over(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        prefetch = Prefetch(tree, tree.files())
        with prefetch:
            pass  # closed at once, however far the thread got
        assert all(prefetch.open(f.path) is None for f in tree.files())
        assert not [t for t in threading.enumerate() if t.name == "patcher-prefetch"]  # close waited for it


def test_a_corrupt_member_stops_the_thread_and_the_reader_meets_the_error_itself() -> None:
    with open_source(FIXTURES / "bad" / "bad_crc.zip") as tree:
        broken = next(f for f in tree.files() if f.path.endswith("scripts/data.txt"))
        with Prefetch(tree, tree.files()) as prefetch:
            assert prefetch.open(broken.path) is None
            later = [f for f in tree.files() if f.path > broken.path]
            assert all(prefetch.open(f.path) is None for f in later)
        with pytest.raises(BadArchive, match="fails its CRC check"):
            tree.read(broken.path)


class _Watched:
    """A source tree that notes which thread read each path (the real reading is the zip's)."""

    def __init__(self, tree: SourceTree) -> None:
        self._tree = tree
        self.readers: list[tuple[str, str, bool, bool]] = []  # path, thread name, daemon, main thread

    def files(self) -> Sequence[SourceFile]:
        return self._tree.files()

    def read(self, path: str) -> bytes:
        me = threading.current_thread()
        self.readers.append((path, me.name, me.daemon, me is threading.main_thread()))
        return self._tree.read(path)

    def open(self, path: str) -> BinaryIO:
        return self._tree.open(path)

    def exists(self, path: str) -> bool:
        return self._tree.exists(path)

    def sha256(self) -> str | None:
        return self._tree.sha256()


def test_the_reading_is_done_by_a_named_daemon_thread_that_close_waits_for(tmp_path: Path) -> None:
    with open_source(wheels_zip(tmp_path, [1_000, 2_000])) as real:
        tree = _Watched(real)
        files = list(tree.files())
        with Prefetch(tree, files) as prefetch:  # type: ignore[arg-type]
            for item in files:
                stream = prefetch.open(item.path)
                assert stream is not None and stream.read() == real.read(item.path)
        # Off the caller's thread, named for a stack dump, never holding the interpreter open.
        assert tree.readers == [(f.path, "patcher-prefetch", True, False) for f in files]
        assert not [t for t in threading.enumerate() if t.name == "patcher-prefetch"]


def test_closing_a_read_ahead_that_never_started_is_harmless(tmp_path: Path) -> None:
    with open_source(wheels_zip(tmp_path, [1_000])) as real:
        tree = _Watched(real)
        prefetch = Prefetch(tree, tree.files())  # type: ignore[arg-type]
        prefetch.close()
        assert tree.readers == []
