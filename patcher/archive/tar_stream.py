"""Read a tar or a gzip-compressed tar once, in order, keeping where each member's bytes can be read back.

``tar_headers`` reads the headers from one of these streams; ``tar_source``
serves the members' bytes from where the stream kept them. A plain tar's
members stay where they are in the input. A ``.tar.gz`` is inflated once,
as it is scanned, into an unnamed temporary file holding only the members'
bytes (no name from the archive ever reaches the file system). Inflating
stops at the limits, checks the gzip CRC and length, and accepts only
zeros after the tar's end-of-archive marker, so a hostile gzip costs at
most the bytes the limits allow. (``gzip_stream`` is the writer's
compressor, not this.)
"""

from __future__ import annotations

import io
import os
import tempfile
import zlib
from typing import BinaryIO

from patcher.archive.limits import RAISE_HINT, Limits
from patcher.archive.paths import printable
from patcher.errors import BadArchive, PatcherError

# tar_headers reads through a Stream, so what both modules use lives here.
BLOCK = 512  # a tar's unit: each header, and each member's data padded to a whole block
REWRITE_HINT = "write the tar again"
# Inflating, copying and reading back go at most this many bytes at a
# time, so no single step holds more in memory however large the tar.
CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
# Tools pad an archive to their record size (tar: 10 KiB); past the
# end-of-archive marker more than this is not padding.
TRAILER_MAX = 1 << 20


class Stream:
    """The tar's bytes in order; where each member's data can be read back later."""

    label: str
    position = 0  # bytes of the tar consumed so far

    def read(self, size: int) -> bytes:
        """Return the next SIZE bytes, fewer only at the end of the tar."""
        raise NotImplementedError

    def keep(self, size: int, name: str) -> int:
        """Pass over SIZE bytes of member data; return where they can be read back."""
        raise NotImplementedError

    def skip(self, size: int) -> None:
        """Pass over SIZE bytes (padding), which must be there."""
        if len(self.read(size)) < size:
            raise truncated(self.label)

    def finish(self) -> None:
        """Check what follows the end-of-archive marker: zeros only, and not much of them."""
        left = TRAILER_MAX
        while True:
            data = self.read(min(CHUNK, left + 1))
            if not data:
                return
            if data.count(0) != len(data):
                raise BadArchive("data follows the tar's end-of-archive marker (two archives joined?)",
                                 where=self.label, hint=REWRITE_HINT)
            left -= len(data)
            if left < 0:
                raise BadArchive(f"more than {TRAILER_MAX} bytes follow the tar's end-of-archive marker",
                                 where=self.label, hint=REWRITE_HINT)


class PlainStream(Stream):
    """An uncompressed tar: member data stays where it is in the input."""

    def __init__(self, fp: BinaryIO, label: str) -> None:
        self._fp = fp
        self.label = label
        self._size = os.fstat(fp.fileno()).st_size

    def read(self, size: int) -> bytes:
        data = self._fp.read(size)
        self.position += len(data)
        return data

    def keep(self, size: int, name: str) -> int:
        start = self.position
        if start + size > self._size:
            raise BadArchive(f"member '{printable(name)}' declares {size} bytes but the tar ends"
                             f" {self._size - start} bytes later (truncated)",
                             where=self.label, hint="download or write it again")
        self._fp.seek(start + size)
        self.position += size
        return start


class GzipStream(Stream):
    """A gzip-compressed tar, inflated in bounded chunks as it is read; member data is copied to STORE."""

    def __init__(self, fp: BinaryIO, store: BinaryIO, label: str, limits: Limits) -> None:
        self._fp = fp
        self._store = store
        self.label = label
        self._limits = limits
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip only: header, CRC and length checked
        self._input = b""  # compressed bytes read but not yet given to the inflater
        self._buffer = bytearray()  # inflated bytes not yet consumed
        self._consumed = 0  # compressed bytes the inflater has taken
        self._produced = 0  # bytes inflated in all
        self._ended = False  # no more gzip members

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and self._inflate(size - len(self._buffer)):
            pass
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        self.position += len(data)
        return data

    def keep(self, size: int, name: str) -> int:
        start = self._store.seek(0, io.SEEK_END)
        left = size
        while left:
            data = self.read(min(left, CHUNK))
            if not data:
                raise BadArchive(f"member '{printable(name)}' declares {size} bytes but the tar ends"
                                 f" {size - left} bytes later (truncated)",
                                 where=self.label, hint="download or write it again")
            try:
                self._store.write(data)
            except OSError as exc:
                raise PatcherError(f"cannot hold the inflated tar: {exc.strerror}", where=tempfile.gettempdir(),
                                   hint="free some space there, or point TMPDIR at a folder with more") from None
            left -= len(data)
        return start

    def _inflate(self, want: int) -> bool:
        """Inflate up to WANT more bytes into the buffer; return False at the end of the gzip data."""
        if self._ended:
            return False
        if self._inflater.eof:
            return self._next_member()
        if not self._input:
            self._input = self._fp.read(CHUNK)
            if not self._input:
                raise BadArchive("the gzip stream ends early (truncated)", where=self.label,
                                 hint="download or write it again")
        given = self._input
        try:
            data = self._inflater.decompress(given, min(max(want, BLOCK), CHUNK))
        except zlib.error as exc:
            raise BadArchive(f"the gzip stream is corrupt ({exc})", where=self.label,
                             hint="download or write it again") from None
        rest = self._inflater.unused_data if self._inflater.eof else self._inflater.unconsumed_tail
        self._consumed += len(given) - len(rest)
        self._input = rest
        self._produced += len(data)
        self._buffer += data
        self._check_ratio()
        return True

    def _next_member(self) -> bool:
        """After one gzip member: another may follow (``cat a.gz b.gz``); zeros are padding."""
        rest = self._input + self._fp.read(len(GZIP_MAGIC))
        if rest.startswith(GZIP_MAGIC):
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._input = rest
            return True
        while rest:
            if rest.count(0) != len(rest):
                raise BadArchive("data that is not gzip follows the gzip stream", where=self.label,
                                 hint=REWRITE_HINT)
            rest = self._fp.read(CHUNK)
        self._input = b""
        self._ended = True
        return False

    def _check_ratio(self) -> None:
        limits = self._limits
        if self._produced >= limits.ratio_min_size and self._produced > limits.max_ratio * max(self._consumed, 1):
            raise BadArchive(
                f"the gzip stream expands more than {limits.max_ratio} times ({self._produced} bytes from"
                f" {self._consumed}): possible gzip bomb",
                where=self.label,
                hint=RAISE_HINT.format("--max-ratio"),
            )


def truncated(label: str) -> BadArchive:
    return BadArchive("the tar ends in the middle of a member (truncated)", where=label,
                      hint="download or write it again")


def temporary_file() -> BinaryIO:
    try:
        # Unnamed where the system allows it (O_TMPFILE), so nothing is left
        # behind whatever ends the run.
        return tempfile.TemporaryFile(prefix="patcher-tar-")
    except OSError as exc:
        raise PatcherError(f"cannot make a temporary file to inflate the tar into: {exc.strerror}",
                           where=tempfile.gettempdir(), hint="point TMPDIR at a folder you can write") from None
