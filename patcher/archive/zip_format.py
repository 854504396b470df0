"""Pack entries as a reproducible zip."""

from __future__ import annotations

import stat
import time
import zipfile
from typing import BinaryIO

from patcher.archive.layout import CHUNK, Entry, Progress

_MSDOS_DIR = 0x10
_UNIX = 3
# A zip stores local date and time, from 1980 to 2107, in two-second steps.
_EARLIEST = (1980, 1, 1, 0, 0, 0)
_LATEST = (2107, 12, 31, 23, 59, 58)


def zip_date_time(mtime: int) -> tuple[int, int, int, int, int, int]:
    """Return MTIME as the zip date_time tuple, in UTC, clamped to 1980-2107."""
    # UTC, not local time: the same input must give the same bytes in
    # every time zone.
    stamp = tuple(time.gmtime(mtime)[:6])
    if stamp < _EARLIEST:
        return _EARLIEST
    if stamp > _LATEST:
        return _LATEST
    return stamp  # type: ignore[return-value]


def write_zip(out: BinaryIO, entries: list[Entry], mtime: int, progress: Progress | None = None) -> None:
    """Write ENTRIES to OUT, a seekable file, as a deflated zip."""
    date_time = zip_date_time(mtime)
    # zlib's default level, 6, as for tar.gz: ZipInfo entries carry no
    # level of their own, so the default is what applies.
    with zipfile.ZipFile(out, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in entries:
            name = entry.name + "/" if entry.file is None else entry.name
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.create_system = _UNIX
            if entry.file is None:
                info.external_attr = ((stat.S_IFDIR | entry.mode) << 16) | _MSDOS_DIR
                info.compress_type = zipfile.ZIP_STORED
                archive.writestr(info, b"")
                continue
            info.external_attr = (stat.S_IFREG | entry.mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            # Declared up front so zipfile picks zip64 only when needed.
            info.file_size = entry.file.length
            reader = entry.file.reader(progress)
            try:
                with archive.open(info, mode="w") as dest:
                    for block in iter(lambda: reader.read(CHUNK), b""):
                        dest.write(block)
                reader.finish()
            finally:
                reader.close()
