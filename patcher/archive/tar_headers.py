"""Read and check a tar's headers, refusing any member that is not a plain file or folder inside the context.

The headers are parsed here rather than by ``tarfile``: every field is
read by index, pax records by their length prefix (never a regular
expression), extended headers are bounded, and each header's checksum is
checked. The rules are the zip reader's and tarfile's ``data_filter``,
only stricter: regular files and folders alone (no hard or symbolic link,
device, FIFO or sparse file), relative names without ``..`` or empty
components (a leading ``./`` is dropped, as ``tar -C dir .`` writes it),
no name twice, none that collides with another by case or Unicode
normalisation, the member count and total size of ``Limits``, and every
member inside the build context (the folder of the shallowest Dockerfile).
"""

from __future__ import annotations

from dataclasses import dataclass

from patcher.archive.limits import RAISE_HINT, Limits
from patcher.archive.paths import check_collisions, find_context_root, parents, path_problem, printable
from patcher.archive.tar_stream import BLOCK, REWRITE_HINT, Stream, truncated
from patcher.errors import BadArchive

ZERO_BLOCK = bytes(BLOCK)
# A pax header or GNU long name bigger than this is no file name.
EXTENDED_MAX = 1 << 20
# Headers in a row before one member: a pax header, a GNU long name and a
# long link name make three; a longer chain is no archive a tool writes.
EXTENDED_RUN = 4

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
_INPUT_HINT = "pass the vendor .zip, a build context apply wrote (.tar.gz, .tar, .zip or a folder)"


@dataclass(frozen=True)
class Member:
    """One member of the tar as its headers describe it, its data located in the store."""

    name: str  # as the tar names it, a leading './' dropped; folders without the trailing slash
    folder: bool
    size: int
    executable: bool
    location: int  # offset of its data in the store (the tar itself, or the inflated copy)


def scan(stream: Stream, label: str, limits: Limits) -> list[Member]:
    """Read every header in order, check each member, and return the members."""
    members: list[Member] = []
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
                                 where=label, hint=REWRITE_HINT)
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



@dataclass(frozen=True)
class _Header:
    kind: bytes
    name: bytes
    size: int
    mode: int


def _header(block: bytes, at: int, label: str, *, first: bool) -> _Header:
    try:
        valid = checksum_ok(block)
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
                         hint=REWRITE_HINT) from None
    if size < 0:
        raise BadArchive(f"the header at byte {at} declares a negative size", where=label, hint=REWRITE_HINT)
    return _Header(block[156:157], name, size, mode)


def checksum_ok(block: bytes) -> bool:
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


def _read_extended(stream: Stream, header: _Header, at: int, label: str, extended: dict[str, bytes]) -> None:
    """Read a pax header ('x', or 'g' for all members) or a GNU long name ('L') or link name ('K')."""
    if header.size > EXTENDED_MAX:
        raise BadArchive(f"the extended header at byte {at} declares {header.size} bytes"
                         f" (more than {EXTENDED_MAX})", where=label, hint=REWRITE_HINT)
    data = stream.read(header.size)
    if len(data) < header.size:
        raise truncated(label)
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
                             hint=REWRITE_HINT)
        if any(key.startswith("GNU.sparse.") for key in records):
            raise BadArchive(f"the member after byte {at} is a sparse file, which is not supported",
                             where=label, hint="re-create the tar without --sparse")
        if header.kind == b"g":
            # A global header (git archive records its commit there) may say
            # nothing about one member's name or size.
            if {"path", "size", "linkpath"} & set(records):
                raise BadArchive(f"the global pax header at byte {at} sets a name or size for every member",
                                 where=label, hint=REWRITE_HINT)
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
            raise BadArchive(f"the pax header at byte {at} is malformed", where=label, hint=REWRITE_HINT)
        key, equals, value = data[space + 1 : end - 1].partition(b"=")
        try:
            text = key.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if not equals or not text:
            raise BadArchive(f"the pax header at byte {at} is malformed", where=label, hint=REWRITE_HINT)
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


def _member(stream: Stream, header: _Header, name: str, size: int, label: str, *, room: int,
            limits: Limits) -> Member | None:
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
        return Member(name.rstrip("/"), True, 0, False, 0)
    if name.endswith("/"):
        raise BadArchive(f"member '{shown}' is a file whose name ends with '/'", where=label)
    if size > room:
        raise BadArchive(f"members declare more than {limits.max_total_size} bytes in all: possible tar bomb",
                         where=label, hint=RAISE_HINT.format("--max-size"))
    location = stream.keep(size, name)
    stream.skip(-size % BLOCK)
    return Member(name, False, size, bool(header.mode & 0o111), location)


def context_root(members: list[Member], label: str) -> str:
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

