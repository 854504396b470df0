"""Read a vendor zip in place, refusing anything unsafe before using it.

Opening one reads its central directory (``zip_directory``) and checks
every member there (``zip_members``), so a bad zip fails before any work
is done. Content is then streamed member by member and checked again as
it is decompressed (actual sizes, CRC), so headers that lie about sizes
gain an attacker nothing.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import threading
import zipfile
import zlib
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, BinaryIO, ContextManager

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from patcher.archive.limits import RAISE_HINT, Limits, open_regular
from patcher.archive.paths import find_context_root
from patcher.archive.tree import IndexedTree
from patcher.archive.zip_directory import check_declared_count, open_zip
from patcher.archive.zip_members import check_members, inside_context
from patcher.errors import BadArchive

# Reads from a member never ask the decompressor for more than this, so a
# single read cannot balloon however well the data compresses.
CHUNK = 1 << 20


def _decompress_errors() -> tuple[type[Exception], ...]:
    errors: list[type[Exception]] = [
        zipfile.BadZipFile,  # bad header magic, CRC, overlapping entries
        zlib.error,  # corrupt deflate stream
        EOFError,  # compressed data ends early
        OSError,  # corrupt bzip2 stream; unreadable input file
        NotImplementedError,  # a method or flag zipfile cannot handle
        UnicodeDecodeError,  # a local header name that is not the UTF-8 its flag claims
    ]
    try:
        import lzma

        errors.append(lzma.LZMAError)
    except ImportError:
        pass
    return tuple(errors)


DECOMPRESS_ERRORS = _decompress_errors()


class ZipSource(IndexedTree):
    """Expose the build context inside a vendor zip as a SourceTree.

    Use it as a context manager (open_source does); streams returned by
    open() are valid until the source is closed.
    """

    def __init__(self, path: Path, limits: Limits = Limits(), fp: BinaryIO | None = None) -> None:
        self.label = path.name
        self._limits = limits
        self._sha256: str | None = None
        # Read-only, a regular file within the limits (archive.limits.open_regular); FP, if given, is one so opened.
        self._fp = fp or open_regular(path, str(path), limits.max_input_size)
        try:
            check_declared_count(self._fp, self.label, limits)
            self._zip = open_zip(self._fp, self.label)
            infos = self._zip.infolist()
            members = check_members(infos, self.label, limits)
            self.prefix = find_context_root(self.label, list(members))
            self.top = self.prefix.split("/", 1)[0] + "/" if self.prefix else ""
            self._members = inside_context(members, infos, self.prefix, self.label)
        except BaseException:
            self._fp.close()
            raise
        self._files = [entry[0] for _, entry in sorted(self._members.items())]
        # Bytes produced so far per member (the most from any one read), so
        # re-reading a member does not count twice against the total.
        self._produced: dict[str, int] = {}
        self._total = 0
        self._charging = threading.Lock()

    def __enter__(self) -> ZipSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the zip and the input file; open streams become unusable."""
        self._zip.close()
        self._fp.close()

    def open(self, path: str) -> BinaryIO:
        """Return a checked stream over PATH that decompresses on demand."""
        source_file, info = self._members[path]
        # zipfile stops at the size the central directory declares and
        # checks the CRC against that; to see whether the data runs past
        # its declared size, open a copy that allows one byte more and
        # check size and CRC ourselves.
        probe = copy.copy(info)
        probe.file_size = info.file_size + 1
        del probe.CRC  # without it zipfile skips its own CRC check
        try:
            raw = self._zip.open(probe)
        except DECOMPRESS_ERRORS as exc:
            raise self._corrupt(info, exc) from exc
        reader = _MemberReader(self, raw, info, source_file.path)
        return io.BufferedReader(reader, buffer_size=CHUNK)

    def sha256(self) -> str:
        """Return the hex sha256 of the input zip file, hashed once on demand."""
        if self._sha256 is None:
            # Hash the handle already open rather than the path, so the
            # digest is of the very file that was read. Moving its position
            # is safe: zipfile seeks before every read of a member.
            digest = hashlib.sha256()
            with self._zip_lock():
                self._fp.seek(0)
                for block in iter(lambda: self._fp.read(CHUNK), b""):
                    digest.update(block)
            self._sha256 = digest.hexdigest()
        return self._sha256

    def _zip_lock(self) -> ContextManager[object]:
        # The lock zipfile holds around each seek-and-read of the shared
        # handle: members may be read on another thread (archive.prefetch).
        lock = getattr(self._zip, "_lock", None)
        return lock if lock is not None else contextlib.nullcontext()

    def _charge(self, path: str, produced: int) -> None:
        # A backstop: declared sizes already fit the total, and each member
        # is held to its declared size, so this trips only if those checks
        # are ever loosened.
        with self._charging:  # members may be read on two threads (archive.prefetch)
            before = self._produced.get(path, 0)
            if produced <= before:
                return
            self._produced[path] = produced
            self._total += produced - before
            total = self._total
        if total > self._limits.max_total_size:
            raise BadArchive(
                f"members expanded past the limit of {self._limits.max_total_size}"
                f" bytes while reading '{path}': possible zip bomb",
                where=self.label,
                hint=RAISE_HINT.format("--max-size"),
            )

    def _corrupt(self, info: zipfile.ZipInfo, exc: BaseException) -> BadArchive:
        detail = str(exc) or type(exc).__name__
        return BadArchive(
            f"member '{info.orig_filename}' is corrupt ({detail})",
            where=self.label,
            hint="download the zip again",
        )


class _MemberReader(io.RawIOBase):
    """Decompress one member, holding it to its declared size and CRC."""

    def __init__(
        self, source: ZipSource, raw: IO[bytes], info: zipfile.ZipInfo, path: str
    ) -> None:
        super().__init__()
        self._source = source
        self._raw = raw
        self._info = info
        self._path = path
        self._count = 0
        self._crc = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), CHUNK)
        try:
            data = self._raw.read(want)
        except DECOMPRESS_ERRORS as exc:
            raise self._source._corrupt(self._info, exc) from exc
        name = self._info.orig_filename
        label = self._source.label
        if not data:
            if self._count < self._info.file_size:
                raise BadArchive(
                    f"member '{name}' holds {self._count} bytes, fewer than the"
                    f" {self._info.file_size} it declares (truncated or corrupt)",
                    where=label,
                    hint="download the zip again",
                )
            if self._crc != self._info.CRC:  # reached for empty members only
                raise self._bad_crc()
            return 0
        before = self._count
        self._count += len(data)
        if self._count > self._info.file_size:
            raise BadArchive(
                f"member '{name}' expands beyond its declared size of"
                f" {self._info.file_size} bytes: possible zip bomb",
                where=label,
            )
        self._crc = zlib.crc32(data, self._crc)
        # Check the CRC as soon as the declared size is reached: a consumer
        # that copies exactly 'size' bytes never reads to EOF.
        if before < self._info.file_size == self._count and self._crc != self._info.CRC:
            raise self._bad_crc()
        self._source._charge(self._path, self._count)
        n = len(data)
        view[:n] = data
        return n

    def _bad_crc(self) -> BadArchive:
        return BadArchive(
            f"member '{self._info.orig_filename}' fails its CRC check (the data is corrupt)",
            where=self._source.label,
            hint="download the zip again",
        )

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()
