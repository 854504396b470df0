"""Read a build context from a tar or a gzip-compressed tar in place, refusing anything unsafe first.

What ``apply`` writes as ``.tar``/``.tar.gz`` (and what ``tar``, ``git
archive`` or Python's ``tarfile`` write) is read back here with the zip
reader's rules and tarfile's ``data_filter`` as the model, only stricter:
regular files and folders alone (no hard or symbolic link, device, FIFO or
sparse file), relative names without ``..`` or empty components (a leading
``./`` is dropped, as ``tar -C dir .`` writes it), no name twice, none that
collides with another by case or Unicode normalisation, and the member
count, total size and expansion limits of ``Limits``.

The headers are parsed here rather than by ``tarfile``: every field is
read by index, pax records by their length prefix (never a regular
expression), extended headers are bounded, and each header's checksum is
checked. Nothing is extracted: a plain tar's members are read in place, and
a ``.tar.gz`` is inflated once, as it is scanned, into an unnamed temporary
file holding only the members' bytes (no name from the archive ever
reaches the file system). Inflating stops at the limits, checks the gzip
CRC and length, and accepts only zeros after the tar's end-of-archive
marker, so a hostile gzip costs at most the bytes the limits allow.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tempfile
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from patcher.archive.limits import RAISE_HINT, Limits, open_regular
from patcher.archive.paths import check_collisions, find_context_root, parents, path_problem, printable
from patcher.archive.tree import IndexedTree, SourceFile
from patcher.errors import BadArchive, PatcherError

BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)
CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
# A pax header or GNU long name bigger than this is no file name.
EXTENDED_MAX = 1 << 20
# Headers in a row before one member: a pax header, a GNU long name and a
# long link name make three; a longer chain is no archive a tool writes.
EXTENDED_RUN = 4
# Tools pad an archive to their record size (tar: 10 KiB); past the
# end-of-archive marker more than this is not padding.
TRAILER_MAX = 1 << 20

_REGULAR = (b"0", b"\0", b"7")
_FOLDER = b"5"
_EXTENDED = (b"x", b"g", b"L", b"K")
_REFUSED = {
    b"1": "a hard link; links are not allowed",
    b"2": "a symbolic link; links are not allowed",
    b"3": "a character device, not a regular file or folder",
    b"4": "a block device, not a regular file or folder",
    b"6": "a fifo, not a regular file or folder",
    b"S": "a sparse file, which is not supported",
}
_LINK_HINT = "re-create the tar without links (GNU tar: -h and --hard-dereference copy what they point to)"
_REWRITE_HINT = "write the tar again"
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
        return _checksum_ok(block)  # an old (v7) tar has no magic, only its checksum
    except ValueError:
        return False


@dataclass(frozen=True)
class _Member:
    """One member of the tar as its headers describe it, its data located in the store."""

    name: str  # as the tar names it, a leading './' dropped; folders without the trailing slash
    folder: bool
    size: int
    executable: bool
    location: int  # offset of its data in the store (the tar itself, or the inflated copy)


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
            stream: _Stream
            if head == GZIP_MAGIC:
                self._store = _temporary_file()
                stream = _GzipStream(self._fp, self._store, self.label, limits)
            else:
                stream = _PlainStream(self._fp, self.label)
            members = _scan(stream, self.label, limits)
            self.prefix = _context(members, self.label)
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

    def __init__(self, source: TarSource, member: _Member) -> None:
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


# --- reading the tar stream ------------------------------------------------------------------


class _Stream:
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
            raise _truncated(self.label)

    def finish(self) -> None:
        """Check what follows the end-of-archive marker: zeros only, and not much of them."""
        left = TRAILER_MAX
        while True:
            data = self.read(min(CHUNK, left + 1))
            if not data:
                return
            if data.count(0) != len(data):
                raise BadArchive("data follows the tar's end-of-archive marker (two archives joined?)",
                                 where=self.label, hint=_REWRITE_HINT)
            left -= len(data)
            if left < 0:
                raise BadArchive(f"more than {TRAILER_MAX} bytes follow the tar's end-of-archive marker",
                                 where=self.label, hint=_REWRITE_HINT)


class _PlainStream(_Stream):
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


class _GzipStream(_Stream):
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
                                 hint=_REWRITE_HINT)
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


# --- headers ------------------------------------------------------------------------------------


def _scan(stream: _Stream, label: str, limits: Limits) -> list[_Member]:
    """Read every header in order, check each member, and return the members."""
    members: list[_Member] = []
    seen: set[str] = set()
    total = 0
    extended: dict[str, bytes] = {}  # pax records and GNU long names for the next member
    run = 0
    while True:
        at = stream.position
        block = stream.read(BLOCK)
        if len(block) < BLOCK:
            if not members and at == 0:
                raise BadArchive("not a tar archive (it is empty)", where=label, hint=_INPUT_HINT)
            raise BadArchive("the tar ends without its end-of-archive marker (truncated)", where=label,
                             hint="download or write it again")
        if block == ZERO_BLOCK:
            if at == 0:
                raise BadArchive("the tar holds no members", where=label)
            stream.finish()
            break
        header = _header(block, at, label, first=at == 0)
        if header.kind in _EXTENDED:
            run += 1
            if run > EXTENDED_RUN:
                raise BadArchive(f"more than {EXTENDED_RUN} extended headers in a row at byte {at}",
                                 where=label, hint=_REWRITE_HINT)
            _read_extended(stream, header, at, label, extended)
            continue
        run = 0
        name = _name(header, extended, label)
        size = _size(header, extended)
        extended = {}
        if len(members) >= limits.max_members:
            raise BadArchive(f"the tar holds more than {limits.max_members} members", where=label,
                             hint=RAISE_HINT.format("--max-members"))
        member = _member(stream, header, name, size, label, room=limits.max_total_size - total, limits=limits)
        if member is None:
            continue  # the root folder itself ('./')
        if member.name in seen:
            raise BadArchive(f"member '{printable(member.name)}{'/' if member.folder else ''}' appears twice",
                             where=label)
        seen.add(member.name)
        total += member.size
        members.append(member)
    if not any(not m.folder for m in members):
        raise BadArchive("the tar holds only folders, no files", where=label)
    return members


_INPUT_HINT = "pass the vendor .zip, a build context apply wrote (.tar.gz, .tar, .zip or a folder)"


@dataclass(frozen=True)
class _Header:
    kind: bytes
    name: bytes
    size: int
    mode: int


def _header(block: bytes, at: int, label: str, *, first: bool) -> _Header:
    try:
        valid = _checksum_ok(block)
    except ValueError:
        valid = False
    if not valid:
        if first:
            raise BadArchive("not a tar archive (its first header is not one)", where=label, hint=_INPUT_HINT)
        raise BadArchive(f"the header at byte {at} fails its checksum (the tar is corrupt)", where=label,
                         hint="download or write it again")
    name = _text_field(block[0:100])
    if block[257:265] == b"ustar\x0000" and block[345:500].strip(b"\0"):
        # POSIX ustar splits a long name into prefix and name; GNU's magic
        # ("ustar  ") keeps other fields there.
        name = _text_field(block[345:500]) + b"/" + name
    try:
        size = _number(block[124:136])
        mode = _number(block[100:108])
    except ValueError:
        raise BadArchive(f"the header at byte {at} holds a number that is not one", where=label,
                         hint=_REWRITE_HINT) from None
    if size < 0:
        raise BadArchive(f"the header at byte {at} declares a negative size", where=label, hint=_REWRITE_HINT)
    return _Header(block[156:157], name, size, mode)


def _checksum_ok(block: bytes) -> bool:
    """Whether the header's checksum field matches its bytes (summed unsigned or, as old tars did, signed)."""
    stored = _number(block[148:156])
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    signed = unsigned - 256 * sum(1 for b in block[:148] + block[156:] if b > 127)
    return stored in (unsigned, signed)


def _text_field(field: bytes) -> bytes:
    end = field.find(b"\0")
    return field if end < 0 else field[:end]


def _number(field: bytes) -> int:
    """Read a numeric header field: octal text, or base-256 when its first byte's high bit is set (GNU)."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value if field[0] == 0x80 else value - (1 << (8 * (len(field) - 1)))
    text = _text_field(field).strip(b" ")
    if not text:
        return 0
    if any(c not in b"01234567" for c in text):
        raise ValueError(text)
    return int(text, 8)


def _read_extended(stream: _Stream, header: _Header, at: int, label: str, extended: dict[str, bytes]) -> None:
    """Read a pax header ('x', or 'g' for all members) or a GNU long name ('L') or link name ('K')."""
    if header.size > EXTENDED_MAX:
        raise BadArchive(f"the extended header at byte {at} declares {header.size} bytes"
                         f" (more than {EXTENDED_MAX})", where=label, hint=_REWRITE_HINT)
    data = stream.read(header.size)
    if len(data) < header.size:
        raise _truncated(label)
    stream.skip(-header.size % BLOCK)
    if header.kind == b"L":
        extended["gnu.path"] = _text_field(data)
    elif header.kind == b"K":
        extended["gnu.linkpath"] = _text_field(data)
    else:
        records = _pax_records(data, at, label)
        size = records.get("size")
        if size is not None and (not size.isdigit() or len(size) > 20):
            raise BadArchive(f"the pax header at byte {at} gives a size that is not a number", where=label,
                             hint=_REWRITE_HINT)
        if any(key.startswith("GNU.sparse.") for key in records):
            raise BadArchive(f"the member after byte {at} is a sparse file, which is not supported",
                             where=label, hint="re-create the tar without --sparse")
        if header.kind == b"g":
            # A global header (git archive records its commit there) may say
            # nothing about one member's name or size.
            if {"path", "size", "linkpath"} & set(records):
                raise BadArchive(f"the global pax header at byte {at} sets a name or size for every member",
                                 where=label, hint=_REWRITE_HINT)
            return
        extended.update(records)


def _pax_records(data: bytes, at: int, label: str) -> dict[str, bytes]:
    """Split pax records (``LENGTH KEY=VALUE\\n``) by their lengths; any record out of shape is refused."""
    records: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + 21)
        digits = data[pos:space]
        end = pos + int(digits) if space > pos and digits.isdigit() else -1
        if not space + 3 <= end <= len(data) or data[end - 1] != 0x0A:
            if not data[pos:].strip(b"\0"):
                break  # NUL padding after the last record
            raise BadArchive(f"the pax header at byte {at} is malformed", where=label, hint=_REWRITE_HINT)
        key, equals, value = data[space + 1 : end - 1].partition(b"=")
        try:
            text = key.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if not equals or not text:
            raise BadArchive(f"the pax header at byte {at} is malformed", where=label, hint=_REWRITE_HINT)
        records[text] = value
        pos = end
    return records


def _name(header: _Header, extended: dict[str, bytes], label: str) -> str:
    raw = extended.get("path", extended.get("gnu.path", header.name))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = raw.decode("utf-8", "backslashreplace")
        raise BadArchive(f"member name '{printable(shown)}' is not valid UTF-8", where=label,
                         hint="re-create the tar with UTF-8 names") from None


def _size(header: _Header, extended: dict[str, bytes]) -> int:
    return int(extended["size"]) if "size" in extended else header.size  # _read_extended checked it


def _member(stream: _Stream, header: _Header, name: str, size: int, label: str, *, room: int,
            limits: Limits) -> _Member | None:
    """Check one member's name and type and locate its data; None for the root folder entry.

    ROOM is how many bytes the members may still declare: a member past it
    is refused before any of its data is read.
    """
    kind = header.kind
    shown = printable(name)
    if kind in _REFUSED:
        raise BadArchive(f"member '{shown}' is {_REFUSED[kind]}", where=label,
                         hint=_LINK_HINT if kind in (b"1", b"2") else None)
    folder = kind == _FOLDER or (kind == b"\0" and name.endswith("/"))  # an old tar marks a folder by its '/'
    if kind not in _REGULAR and not folder:
        raise BadArchive(f"member '{shown}' is of unknown tar type {kind.decode('latin-1')!r},"
                         " not a regular file or folder", where=label)
    while name.startswith("./"):
        name = name[2:]  # 'tar -C DIR .' names everything './x'
    if name in ("", ".") and folder:
        return None
    problem = path_problem(name)
    if problem:
        raise BadArchive(f"member '{shown}' {problem}", where=label)
    if folder:
        if size:
            raise BadArchive(f"folder entry '{shown}' holds data", where=label)
        return _Member(name.rstrip("/"), True, 0, False, 0)
    if name.endswith("/"):
        raise BadArchive(f"member '{shown}' is a file whose name ends with '/'", where=label)
    if size > room:
        raise BadArchive(f"members declare more than {limits.max_total_size} bytes in all: possible tar bomb",
                         where=label, hint=RAISE_HINT.format("--max-size"))
    location = stream.keep(size, name)
    stream.skip(-size % BLOCK)
    return _Member(name, False, size, bool(header.mode & 0o111), location)


def _context(members: list[_Member], label: str) -> str:
    """Return the context root (the folder of the shallowest Dockerfile); refuse members beside it."""
    files = [m.name for m in members if not m.folder]
    folders = [m.name for m in members if m.folder]
    check_collisions(label, files, folders)
    prefix = find_context_root(label, files)
    above = set(parents(prefix + "x"))
    for member in members:
        if member.name.startswith(prefix) or member.name in above:
            continue
        raise BadArchive(
            f"member '{printable(member.name)}' lies outside the build context '{prefix}'"
            " (the folder holding the Dockerfile)",
            where=label,
            hint="keep one build context per tar",
        )
    return prefix


def _truncated(label: str) -> BadArchive:
    return BadArchive("the tar ends in the middle of a member (truncated)", where=label,
                      hint="download or write it again")


def _temporary_file() -> BinaryIO:
    try:
        # Unnamed where the system allows it (O_TMPFILE), so nothing is left
        # behind whatever ends the run.
        return tempfile.TemporaryFile(prefix="patcher-tar-")
    except OSError as exc:
        raise PatcherError(f"cannot make a temporary file to inflate the tar into: {exc.strerror}",
                           where=tempfile.gettempdir(), hint="point TMPDIR at a folder you can write") from None
