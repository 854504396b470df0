"""Read a zip's central directory, refusing a zip that cannot be read or declares too many members.

zipfile builds an object per central-directory entry before anyone sees
one, so the entry count is read from the end record first; then zipfile
parses the directory, and each way that can fail becomes one
``BadArchive`` that says whether the file is no zip at all or a broken one.
"""

from __future__ import annotations

import io
import struct
import zipfile
from typing import BinaryIO

from patcher.archive.limits import RAISE_HINT, Limits
from patcher.errors import BadArchive


def check_declared_count(fp: BinaryIO, label: str, limits: Limits) -> None:
    """Refuse a zip whose end record declares more members than ``limits`` allow."""
    # zipfile builds an object per central-directory entry before we see
    # any, so read the count from the end record first and refuse a zip
    # with millions of entries before parsing them.
    count = _declared_member_count(fp)
    if count is not None and count > limits.max_members:
        raise too_many_members(count, label, limits)


def too_many_members(count: int, label: str, limits: Limits) -> BadArchive:
    """Return the error for a zip with COUNT members, more than the limit."""
    return BadArchive(
        f"zip declares {count} members, more than the limit of {limits.max_members}",
        where=label,
        hint=RAISE_HINT.format("--max-members"),
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


def open_zip(fp: BinaryIO, label: str) -> zipfile.ZipFile:
    """Parse the central directory; raise BadArchive for an empty file, a non-zip, or a broken zip."""
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
