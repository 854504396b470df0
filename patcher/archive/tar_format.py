"""Pack entries as a reproducible tar or tar.gz stream."""

from __future__ import annotations

import tarfile
from typing import BinaryIO

from patcher.archive.gzip_stream import GzipWriter
from patcher.archive.layout import CHUNK, Entry, Progress

# gzip -6 is what 'tar czf' uses, and the benchmark compares against it.
# On a 100 MB context, most of it an already-compressed wheel, level 9
# costs about twice the time for about 1% less output.
GZIP_LEVEL = 6


def write_tar(
    out: BinaryIO, entries: list[Entry], mtime: int, *, gz: bool, progress: Progress | None = None
) -> None:
    """Write ENTRIES to OUT as a PAX tar, gzip-compressed when GZ is set."""
    if not gz:
        _write(out, entries, mtime, progress)
        return
    # Not tarfile.open("w:gz"): that records the output's file name and the
    # current time in the gzip header, and compresses on one thread.
    with GzipWriter(out, GZIP_LEVEL) as stream:
        _write(stream, entries, mtime, progress)  # type: ignore[arg-type]


def _write(out: BinaryIO, entries: list[Entry], mtime: int, progress: Progress | None) -> None:
    # The encoding is explicit: tarfile's default follows the locale.
    with tarfile.TarFile(
        fileobj=out,
        mode="w",
        format=tarfile.PAX_FORMAT,
        encoding="utf-8",
        copybufsize=CHUNK,
    ) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mode = entry.mode
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if entry.file is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
                continue
            info.type = tarfile.REGTYPE
            info.size = entry.file.length
            reader = entry.file.reader(progress)
            try:
                tar.addfile(info, reader)
                reader.finish()
            finally:
                reader.close()
