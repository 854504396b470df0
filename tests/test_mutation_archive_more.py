"""The tar writer's bytes and the read-ahead thread, where mutation testing found them unasserted (issue 13).

The tar tests compare ``write_tar``'s output with what ``tarfile.TarFile``
itself writes (PAX, UTF-8) for shapes the sample-based tests leave open: a
name that is not UTF-8 on disk (PAX ``hdrcharset=BINARY``), and members that
end exactly two blocks short of a 10 KiB record, where the two end-of-archive
zero blocks fill the record and nothing more may follow. The read-ahead tests
run ``Prefetch`` on a zip built the way a vendor drop holds wheels.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import threading
import zipfile
from pathlib import Path
from typing import BinaryIO, Sequence

from patcher.archive import OutputFile, OutputFormat, open_source, write_output
from patcher.archive.layout import plan
from patcher.archive.prefetch import Prefetch
from patcher.archive.tar_format import write_tar
from patcher.archive.tree import SourceFile, SourceTree

MTIME = 315532800  # 1980-01-01, the default time of every output


def _tarfile_bytes(files: list[OutputFile]) -> bytes:
    """Return what tarfile.TarFile(format=PAX, encoding='utf-8') writes for FILES laid out by plan()."""
    buffer = io.BytesIO()
    with tarfile.TarFile(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        for entry in plan(files):
            info = tarfile.TarInfo(entry.name)
            info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = entry.mode, MTIME, 0, 0, "", ""
            if entry.file is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                assert entry.file.data is not None
                info.size = len(entry.file.data)
                tar.addfile(info, io.BytesIO(entry.file.data))
    return buffer.getvalue()


def _write_tar(files: list[OutputFile]) -> bytes:
    out = io.BytesIO()
    write_tar(out, plan(files), MTIME, gz=False)
    return out.getvalue()


# -- tar bytes -------------------------------------------------------------------------


def test_a_name_that_is_not_utf8_on_disk_is_written_as_its_bytes_like_tarfile(tmp_path: Path) -> None:
    # A Latin-1 folder and file name, as a Windows-era vendor drop unpacked on Linux holds
    # it: Python sees the bytes it cannot decode as surrogates (os.fsdecode).
    folder = os.fsdecode(b"donn\xe9es")
    name = os.fsdecode(b"donn\xe9es/r\xe9sum\xe9.txt")
    files = [
        OutputFile("Dockerfile", False, data=b"FROM base\r\nCOPY . /workspace/\r\n"),
        OutputFile(name, False, data=b"notes\n"),
    ]
    ours = _write_tar(files)
    assert ours == _tarfile_bytes(files)
    assert b"hdrcharset=BINARY" in ours and b"donn\xe9es/r\xe9sum\xe9.txt" in ours

    write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar", encoding="utf-8", errors="surrogateescape") as archive:
        assert archive.getnames() == ["Dockerfile", folder, name]
        assert [m.isdir() for m in archive.getmembers()] == [False, True, False]
        handle = archive.extractfile(name)
        assert handle is not None and handle.read() == b"notes\n"


def test_members_ending_two_blocks_before_a_record_get_exactly_the_two_end_blocks() -> None:
    # Header (512) + 8704 bytes of content = 9216: the two zero blocks end the 10 KiB record.
    files = [OutputFile("Dockerfile", False, data=b"# vendor Dockerfile\r\n" * 414 + b"FROM x\n" + b"#" * 3)]
    assert len(files[0].data or b"") == 8704
    ours = _write_tar(files)
    assert ours == _tarfile_bytes(files)
    assert len(ours) == tarfile.RECORDSIZE
    assert ours[9216:] == tarfile.NUL * 1024


def test_a_gzipped_tar_holds_the_same_tar_bytes(tmp_path: Path) -> None:
    files = [OutputFile("Dockerfile", False, data=b"FROM x\n" * 1243 + b"#" * 3)]
    assert len(files[0].data or b"") == 8704
    write_output(tmp_path / "ctx.tar.gz", files, fmt=OutputFormat.TAR_GZ)
    assert gzip.decompress((tmp_path / "ctx.tar.gz").read_bytes()) == _tarfile_bytes(files)


# -- the read-ahead thread ---------------------------------------------------------------


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


def _wheels_zip(tmp_path: Path, sizes: list[int]) -> Path:
    path = tmp_path / "enginex-demo.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("enginex-demo/Dockerfile", b"FROM base\r\nCOPY ./wheels /wheels\r\n")
        for number, size in enumerate(sizes):
            archive.writestr(f"enginex-demo/wheels/engine_{number}-0.6.3-py3-none-any.whl",
                             bytes((number + i) % 251 for i in range(size)))
    return path


def test_the_budget_counts_every_file_held_not_each_alone(tmp_path: Path) -> None:
    with open_source(_wheels_zip(tmp_path, [30_000, 30_000, 30_000])) as tree:
        wheels = [f for f in tree.files() if f.path.startswith("wheels/")]
        assert [f.size for f in wheels] == [30_000] * 3
        with Prefetch(tree, wheels, budget=60_000) as prefetch:
            held = [prefetch.open(f.path) for f in wheels]
            assert [stream is not None for stream in held] == [True, True, False]
            first = held[0]
            assert first is not None and first.read() == tree.read(wheels[0].path)


def test_the_reading_is_done_by_a_named_daemon_thread_that_close_waits_for(tmp_path: Path) -> None:
    with open_source(_wheels_zip(tmp_path, [1_000, 2_000])) as real:
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
    with open_source(_wheels_zip(tmp_path, [1_000])) as real:
        tree = _Watched(real)
        prefetch = Prefetch(tree, tree.files())  # type: ignore[arg-type]
        prefetch.close()
        assert tree.readers == []
