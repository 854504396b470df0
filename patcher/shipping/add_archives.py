"""Whether ``ADD`` unpacks a context file: decided by its bytes, never by its name.

The Dockerfile reference: a local tar archive, plain or compressed with
gzip, bzip2, xz (or zstd), is unpacked into DEST; "whether a file is
identified as a recognized compression format or not is done solely based
on the contents of the file, not the name of the file" (an empty
``x.tar.gz`` is copied as it is). moby detects the compression by its magic
bytes and then reads a tar header from what it decompresses. The reader
does the same on the file's first bytes: at most 64 KiB read and 1 KiB
decompressed, so a hostile file (a bomb, a huge member) costs nothing.
"""

from __future__ import annotations

import tarfile
import zlib
from types import ModuleType
from typing import BinaryIO


def _optional(name: str) -> ModuleType | None:
    """A compression module CPython may be built without (no libbz2 or liblzma on the build machine)."""
    try:
        return __import__(name)
    except ImportError:
        return None


bz2, lzma = _optional("bz2"), _optional("lzma")
# What a stream that is not what its magic says raises (bz2's OSError, zlib's error, lzma's own LZMAError).
_BROKEN: tuple[type[Exception], ...] = (OSError, EOFError, ValueError, zlib.error, *((lzma.LZMAError,) if lzma else ()))

_READ = 64 * 1024
_HEADER = tarfile.BLOCKSIZE


def unpacks(stream: BinaryIO) -> bool:
    """Whether ADD unpacks the file read from ``stream`` (a tar archive, maybe compressed)."""
    head = stream.read(_READ)
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return True  # zstd: Python 3.11 has no decoder; moby unpacks a zstd tar, and such a file is one in practice
    if head.startswith(b"BZh") and bz2 is None or head.startswith(b"\xfd7zXZ\x00") and lzma is None:
        return True  # this Python cannot look inside: taken as the archive its magic says (its files unread)
    try:
        if head.startswith(b"\x1f\x8b\x08"):
            block = zlib.decompressobj(wbits=31).decompress(head, _HEADER)
        elif head.startswith(b"BZh") and bz2 is not None:
            block = bz2.BZ2Decompressor().decompress(head, max_length=_HEADER)
        elif head.startswith(b"\xfd7zXZ\x00") and lzma is not None:
            block = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(head, max_length=_HEADER)
        else:
            block = head[:_HEADER]
    except _BROKEN:
        return False  # not what its magic says: copied as it is
    return _tar_header(block)


def _tar_header(block: bytes) -> bool:
    """Whether ``block`` is a tar header Go's archive/tar reads (its checksum holds; an empty archive is none)."""
    if len(block) < _HEADER or not block.strip(b"\0"):
        return False
    try:
        tarfile.TarInfo.frombuf(block[:_HEADER], "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True
