"""Read a build context from a tar or a gzip-compressed tar in place, refusing anything unsafe first.

What ``apply`` writes as ``.tar``/``.tar.gz`` (and what ``tar``, ``git
archive`` or Python's ``tarfile`` write) is read back here with the zip
reader's rules and tarfile's ``data_filter`` as the model, only stricter.
Opening one reads the tar once, front to back (``tar_stream``), checking
every header and member on the way (``tar_headers``), so a bad tar fails
before any work is done. Nothing is extracted: a plain tar's members are
then served from where they lie in it, a ``.tar.gz``'s from the unnamed
temporary file it was inflated into, each held to its declared size.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from patcher.archive.limits import Limits, open_regular
from patcher.archive.tar_headers import ZERO_BLOCK, Member, checksum_ok, context_root, scan
from patcher.archive.tar_stream import BLOCK, CHUNK, GZIP_MAGIC, GzipStream, PlainStream, Stream, temporary_file
from patcher.archive.tree import IndexedTree, SourceFile
from patcher.errors import BadArchive

# Other compressions a context might come in, by magic bytes: said by name, not read.
_OTHER_COMPRESSIONS = (
    (b"BZh", "bzip2", "bunzip2 -k"),
    (b"\xfd7zXZ\x00", "xz", "unxz -k"),
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
)


def is_tar(path: Path) -> bool:
    """Return whether PATH holds a tar or a gzip stream, by its first bytes; refuse other compressions.

    A file that cannot be opened or is not a regular file is left to the
    zip reader, which says what is wrong with it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, BLOCK)
    except OSError:
        return False
    finally:
        os.close(fd)
    for magic, name, command in _OTHER_COMPRESSIONS:
        if head.startswith(magic):
            raise BadArchive(
                f"a {name}-compressed file: only zips, tars and gzip-compressed tars are read",
                where=path.name,
                hint=f"decompress it ({command} {path}) and pass the tar",
            )
    return head.startswith(GZIP_MAGIC) or _is_tar_header(head)


def _is_tar_header(block: bytes) -> bool:
    if len(block) < BLOCK or block == ZERO_BLOCK:
        return False
    if block[257:262] == b"ustar":
        return True
    try:
        return checksum_ok(block)  # an old (v7) tar has no magic, only its checksum
    except ValueError:
        return False


class TarSource(IndexedTree):
    """Expose the build context inside a tar or tar.gz as a SourceTree.

    Use it as a context manager (open_source does); streams returned by
    open() are valid until the source is closed.
    """

    def __init__(self, path: Path, limits: Limits = Limits(), fp: BinaryIO | None = None) -> None:
        self.label = path.name
        self._sha256: str | None = None
        self._lock = threading.Lock()  # one file position, shared by every member stream
        # Read-only, a regular file within the limits (archive.limits.open_regular); FP, if given, is one so opened.
        self._fp = fp or open_regular(path, str(path), limits.max_input_size)
        self._store: BinaryIO = self._fp
        try:
            head = self._fp.read(len(GZIP_MAGIC))
            self._fp.seek(0)
            stream: Stream
            if head == GZIP_MAGIC:
                self._store = temporary_file()
                stream = GzipStream(self._fp, self._store, self.label, limits)
            else:
                stream = PlainStream(self._fp, self.label)
            members = scan(stream, self.label, limits)
            self.prefix = context_root(members, self.label)
            self.top = self.prefix.split("/", 1)[0] + "/" if self.prefix else ""
        except BaseException:
            self.close()
            raise
        self._members = {
            m.name[len(self.prefix):]: (SourceFile(m.name[len(self.prefix):], m.size, m.executable), m)
            for m in members if not m.folder
        }
        self._members = dict(sorted(self._members.items()))
        self._files = [entry[0] for entry in self._members.values()]

    def __enter__(self) -> TarSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the input and the inflated copy (which the system then deletes)."""
        if self._store is not self._fp:
            self._store.close()
        self._fp.close()

    def open(self, path: str) -> BinaryIO:
        """Return a stream over PATH's bytes, read where they lie."""
        _, member = self._members[path]
        return io.BufferedReader(_MemberReader(self, member), buffer_size=CHUNK)

    def sha256(self) -> str:
        """Return the hex sha256 of the input file (the .tar or .tar.gz as given), hashed once on demand."""
        if self._sha256 is None:
            digest = hashlib.sha256()
            with self._lock:
                self._fp.seek(0)
                for block in iter(lambda: self._fp.read(CHUNK), b""):
                    digest.update(block)
            self._sha256 = digest.hexdigest()
        return self._sha256

    def _read_at(self, offset: int, size: int) -> bytes:
        with self._lock:
            self._store.seek(offset)
            return self._store.read(size)


class _MemberReader(io.RawIOBase):
    """Read one member's bytes from the store, holding it to its size."""

    def __init__(self, source: TarSource, member: Member) -> None:
        super().__init__()
        self._source = source
        self._member = member
        self._done = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), CHUNK, self._member.size - self._done)
        if want <= 0:
            return 0
        data = self._source._read_at(self._member.location + self._done, want)
        if len(data) < want:
            # The file shrank after it was scanned: say so rather than hand out less.
            raise BadArchive(f"member '{self._member.name}' is truncated (the file changed while it was read)",
                             where=self._source.label, hint="read it again")
        self._done += len(data)
        view[: len(data)] = data
        return len(data)
