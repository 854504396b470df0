"""Builders of tars and gzip streams, well-formed and hostile, byte by byte (tests/archive/test_tar_input.py).

``tarfile`` will not write most of what a hostile tar holds (a bad
checksum, a malformed pax record, a size past what follows, a link
pretending to be a file), so headers are assembled here field by field,
as POSIX lays them out: name 0-100, mode 100-108, size 124-136, checksum
148-156, type 156, link name 157-257, magic 257-265, prefix 345-500.
The minimal context is the zip corpus's (a Dockerfile and a script).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable

import tests.fixtures_vendor  # noqa: F401  (puts fixtures/ on sys.path)

from make_bad_archives import DOCKERFILE, SCRIPT  # noqa: E402

BLOCK = 512
RECORD = 10240
USTAR = b"ustar\x0000"
GNU = b"ustar  \x00"


def header(name: str | bytes, *, size: int = 0, kind: bytes = b"0", mode: int = 0o644, link: bytes = b"",
           magic: bytes = USTAR, prefix: bytes = b"", size_field: bytes | None = None,
           checksum: int | None = None) -> bytes:
    """Return one 512-byte header; ``size_field`` and ``checksum`` replace the computed ones."""
    raw = name.encode() if isinstance(name, str) else name
    block = bytearray(BLOCK)
    block[0:len(raw[:100])] = raw[:100]
    block[100:108] = b"%07o\0" % mode
    block[108:116] = b"0000000\0"
    block[116:124] = b"0000000\0"
    block[124:136] = size_field if size_field is not None else b"%011o\0" % size
    block[136:148] = b"00000000000\0"
    block[156:157] = kind
    block[157:157 + len(link)] = link
    block[257:265] = magic
    block[345:345 + len(prefix)] = prefix
    block[148:156] = b" " * 8
    total = sum(block) if checksum is None else checksum
    block[148:156] = b"%06o\0 " % total
    return bytes(block)


def padded(data: bytes) -> bytes:
    """Return DATA followed by zeros up to a whole number of blocks."""
    return data + bytes(-len(data) % BLOCK)


def member(name: str | bytes, data: bytes = b"", **fields: object) -> bytes:
    """Return a header and its data, padded."""
    return header(name, size=len(data), **fields) + padded(data)  # type: ignore[arg-type]


def folder(name: str) -> bytes:
    """Return a folder entry."""
    return header(name.rstrip("/") + "/", kind=b"5", mode=0o755)


def pax_record(key: str, value: bytes) -> bytes:
    """Return one ``LENGTH KEY=VALUE\\n`` record, its length counting itself."""
    body = b" " + key.encode() + b"=" + value + b"\n"
    length = len(body) + 1
    while len(str(length).encode()) + len(body) != length:
        length += 1
    return str(length).encode() + body


def pax(records: dict[str, bytes] | bytes, kind: bytes = b"x") -> bytes:
    """Return a pax extended header ('x', or 'g' for every member) with RECORDS (or raw bytes)."""
    data = records if isinstance(records, bytes) else b"".join(pax_record(k, v) for k, v in records.items())
    return member("././@PaxHeader", data, kind=kind)


def end(data: bytes) -> bytes:
    """Return DATA with the end-of-archive marker (two zero blocks), padded to a 10 KiB record as tar does."""
    data += bytes(2 * BLOCK)
    return data + bytes(-len(data) % RECORD)


def context(prefix: str = "") -> list[bytes]:
    """Return the members of the minimal context: a Dockerfile and an executable script, under PREFIX."""
    return [
        member(prefix + "Dockerfile", DOCKERFILE),
        folder(prefix + "scripts"),
        member(prefix + "scripts/run.sh", SCRIPT, mode=0o755),
    ]


def tar_of(*parts: bytes | Iterable[bytes], ended: bool = True) -> bytes:
    """Return the minimal context followed by PARTS, ended with the marker unless ``ended`` is False."""
    flat: list[bytes] = list(context())
    for part in parts:
        flat.extend([part] if isinstance(part, bytes) else part)
    data = b"".join(flat)
    return end(data) if ended else data


def gz(data: bytes, level: int = 6) -> bytes:
    """Return DATA as one gzip member without a time or name in its header."""
    return gzip.compress(data, compresslevel=level, mtime=0)
