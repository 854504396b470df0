"""Read a vendor zip in place, refusing anything unsafe before using it.

Every member is checked from the central directory when the zip is
opened (names, types, flags, methods, declared sizes), so a bad zip fails
before any work is done. Content is then streamed member by member and
checked again as it is decompressed (actual sizes, CRC), so headers that
lie about sizes gain an attacker nothing.

Context rule: the context root is the folder holding the shallowest
Dockerfile, which must be unique; every member must lie inside it (or be
a folder entry above it). A zip therefore has one top folder, or none
when the Dockerfile sits at the zip root. Members beside the context
would be dropped from a repacked zip, so they are refused rather than
silently lost.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import stat
import struct
import threading
import zipfile
import zlib
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, BinaryIO, ContextManager

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from patcher.archive.limits import Limits, open_regular
from patcher.archive.paths import (
    check_collisions,
    find_context_root,
    parents,
    path_problem,
    printable,
)
from patcher.archive.tree import IndexedTree, SourceFile
from patcher.errors import BadArchive

# Reads from a member never ask the decompressor for more than this, so a
# single read cannot balloon however well the data compresses.
CHUNK = 1 << 20

_FLAG_ENCRYPTED = 0x1
_FLAG_PATCHED_DATA = 0x20
_FLAG_STRONG_ENCRYPTION = 0x40
_FLAG_UTF8 = 0x800


def _supported_methods() -> dict[int, str]:
    methods = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
    # bzip2 and lzma are optional modules of CPython builds; accept them
    # exactly when zipfile can decompress them here.
    try:
        import bz2  # noqa: F401

        methods[zipfile.ZIP_BZIP2] = "bzip2"
    except ImportError:
        pass
    try:
        import lzma  # noqa: F401

        methods[zipfile.ZIP_LZMA] = "lzma"
    except ImportError:
        pass
    return methods


SUPPORTED_METHODS = _supported_methods()


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

_SPECIAL_TYPES = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a fifo",
    stat.S_IFSOCK: "a socket",
}


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
            _check_declared_count(self._fp, self.label, limits)
            self._zip = _open_zip(self._fp, self.label)
            infos = self._zip.infolist()
            members = _check_members(infos, self.label, limits)
            self.prefix = find_context_root(self.label, list(members))
            self.top = self.prefix.split("/", 1)[0] + "/" if self.prefix else ""
            self._members = _inside_context(members, infos, self.prefix, self.label)
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
                hint=_RAISE.format("--max-size"),
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


# Limits are there for untrusted input; a trusted archive may pass them.
_RAISE = "if the archive is trusted, raise the limit with {}"


def _check_declared_count(fp: BinaryIO, label: str, limits: Limits) -> None:
    # zipfile builds an object per central-directory entry before we see
    # any, so read the count from the end record first and refuse a zip
    # with millions of entries before parsing them.
    count = _declared_member_count(fp)
    if count is not None and count > limits.max_members:
        raise _too_many(count, label, limits)


def _too_many(count: int, label: str, limits: Limits) -> BadArchive:
    return BadArchive(
        f"zip declares {count} members, more than the limit of {limits.max_members}",
        where=label,
        hint=_RAISE.format("--max-members"),
    )


def _declared_member_count(fp: BinaryIO) -> int | None:
    """Return the entry count of the end-of-central-directory record, if found."""
    fp.seek(0, io.SEEK_END)
    size = fp.tell()
    tail_len = min(size, 22 + 0xFFFF)  # the record plus the longest comment
    fp.seek(size - tail_len)
    tail = fp.read(tail_len)
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or len(tail) - pos < 22:
        return None
    (count,) = struct.unpack("<H", tail[pos + 10 : pos + 12])
    if count != 0xFFFF:
        return int(count)
    locator_at = size - tail_len + pos - 20
    if locator_at < 0:
        return None
    fp.seek(locator_at)
    locator = fp.read(20)
    if locator[:4] != b"PK\x06\x07":
        return None
    (record_at,) = struct.unpack("<Q", locator[8:16])
    fp.seek(record_at)
    record = fp.read(56)
    if record[:4] != b"PK\x06\x06" or len(record) < 56:
        return None
    (count64,) = struct.unpack("<Q", record[32:40])
    return int(count64)


def _open_zip(fp: BinaryIO, label: str) -> zipfile.ZipFile:
    fp.seek(0)
    head = fp.read(4)
    fp.seek(0)
    if not head:
        raise BadArchive("the file is empty, not a zip", where=label)
    try:
        return zipfile.ZipFile(fp)
    except UnicodeDecodeError:
        raise BadArchive(
            "a member name is marked as UTF-8 but is not valid UTF-8",
            where=label,
            hint="re-create the zip",
        ) from None
    except NotImplementedError as exc:
        raise BadArchive(
            f"the zip uses a feature that is not supported ({exc})",
            where=label,
            hint="re-create the zip with a common tool",
        ) from None
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        ValueError,
        struct.error,
        OverflowError,
    ):
        if head.startswith(b"PK"):
            raise BadArchive(
                "the zip is truncated or corrupt: its central directory cannot be read",
                where=label,
                hint="download it again",
            ) from None
        raise BadArchive(
            "not a zip file",
            where=label,
            hint="pass the vendor .zip or an unpacked folder",
        ) from None


def _check_members(
    infos: list[zipfile.ZipInfo], label: str, limits: Limits
) -> dict[str, SourceFile]:
    """Validate every entry; return the files by full zip path."""
    if not infos:
        raise BadArchive("the zip holds no members", where=label)
    if len(infos) > limits.max_members:
        raise _too_many(len(infos), label, limits)
    files: dict[str, SourceFile] = {}
    dirs: set[str] = set()
    offsets: dict[int, str] = {}
    total = 0
    for info in infos:
        name = info.orig_filename
        _check_name(info, label)
        is_dir = _check_type(info, label)
        _check_flags(info, label)
        if is_dir:
            dirs.add(name.rstrip("/"))
            continue
        if name in files:
            raise BadArchive(f"member '{name}' appears twice", where=label)
        # Entries sharing one local header are the overlapping-file zip
        # bomb: tiny on disk, huge when every alias is expanded.
        other = offsets.setdefault(info.header_offset, name)
        if other != name:
            raise BadArchive(
                f"members '{other}' and '{name}' share the same data: possible zip bomb",
                where=label,
            )
        _check_ratio(info, label, limits)
        total += info.file_size
        if total > limits.max_total_size:
            raise BadArchive(
                f"members declare more than {limits.max_total_size} bytes in all:"
                " possible zip bomb",
                where=label,
                hint=_RAISE.format("--max-size"),
            )
        mode = info.external_attr >> 16
        files[name] = SourceFile(name, info.file_size, bool(mode & 0o111))
    if len(dirs) + len(files) < len(infos):
        _raise_duplicate_dir(infos, label)
    check_collisions(label, files, dirs)
    if not files:
        raise BadArchive("the zip holds only folders, no files", where=label)
    return files


def _raise_duplicate_dir(infos: list[zipfile.ZipInfo], label: str) -> None:
    seen: set[str] = set()
    for info in infos:
        if info.orig_filename in seen:
            raise BadArchive(f"member '{info.orig_filename}' appears twice", where=label)
        seen.add(info.orig_filename)


def _check_name(info: zipfile.ZipInfo, label: str) -> None:
    name = info.orig_filename
    if not info.flag_bits & _FLAG_UTF8 and not name.isascii():
        # zipfile decodes unflagged names as cp437; encoding back gives the
        # exact bytes stored, which is what the user can recognise.
        shown = name.encode("cp437").decode("ascii", "backslashreplace")
        raise BadArchive(
            f"member name '{shown}' is not ASCII and the zip does not mark"
            " its names as UTF-8, so its encoding is unknown",
            where=label,
            hint="re-create the zip with UTF-8 names",
        )
    problem = path_problem(name)
    if problem:
        raise BadArchive(f"member '{printable(name)}' {problem}", where=label)


def _check_type(info: zipfile.ZipInfo, label: str) -> bool:
    """Return whether INFO is a folder; raise if it is neither file nor folder."""
    name = info.orig_filename
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise BadArchive(
            f"member '{name}' is a symbolic link; links are not allowed",
            where=label,
            hint="re-create the zip without links",
        )
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = _SPECIAL_TYPES.get(kind, f"of unknown file type {kind:#o}")
        raise BadArchive(
            f"member '{name}' is {what}, not a regular file or folder",
            where=label,
        )
    is_dir = name.endswith("/")
    if kind == stat.S_IFDIR and not is_dir:
        raise BadArchive(
            f"member '{name}' is marked as a folder but its name has no trailing slash",
            where=label,
        )
    if is_dir and info.file_size:
        raise BadArchive(f"folder entry '{name}' holds data", where=label)
    return is_dir


def _check_flags(info: zipfile.ZipInfo, label: str) -> None:
    name = info.orig_filename
    if info.flag_bits & (_FLAG_ENCRYPTED | _FLAG_STRONG_ENCRYPTION):
        raise BadArchive(
            f"member '{name}' is encrypted; encrypted zips are not supported",
            where=label,
            hint="re-create the zip without a password",
        )
    if info.flag_bits & _FLAG_PATCHED_DATA:
        raise BadArchive(
            f"member '{name}' uses compressed patched data, which is not supported",
            where=label,
            hint="re-create the zip with deflate",
        )
    if info.compress_type not in SUPPORTED_METHODS:
        known = ", ".join(SUPPORTED_METHODS.values())
        raise BadArchive(
            f"member '{name}' uses unsupported compression method"
            f" {info.compress_type} (supported: {known})",
            where=label,
            hint="re-create the zip with deflate",
        )


def _check_ratio(info: zipfile.ZipInfo, label: str, limits: Limits) -> None:
    if info.file_size < limits.ratio_min_size:
        return
    if info.file_size > limits.max_ratio * max(info.compress_size, 1):
        ratio = info.file_size // max(info.compress_size, 1)
        raise BadArchive(
            f"member '{info.orig_filename}' would expand {ratio} times"
            f" (limit {limits.max_ratio}): possible zip bomb",
            where=label,
            hint=_RAISE.format("--max-ratio"),
        )


def _inside_context(
    files: dict[str, SourceFile],
    infos: list[zipfile.ZipInfo],
    prefix: str,
    label: str,
) -> dict[str, tuple[SourceFile, zipfile.ZipInfo]]:
    """Return the context's files keyed by context-relative path."""
    above = set(parents(prefix + "x"))
    by_name = {info.orig_filename: info for info in infos}
    for info in infos:
        name = info.orig_filename
        if name.startswith(prefix) or name.rstrip("/") in above:
            continue
        raise BadArchive(
            f"member '{name}' lies outside the build context '{prefix}'"
            " (the folder holding the Dockerfile)",
            where=label,
            hint="keep one build context per zip",
        )
    members: dict[str, tuple[SourceFile, zipfile.ZipInfo]] = {}
    for name, entry in files.items():
        rel = name[len(prefix) :]
        members[rel] = (SourceFile(rel, entry.size, entry.executable), by_name[name])
    return members
