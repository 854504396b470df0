"""Bounds that keep a hostile input from exhausting memory, disk or time, and the one way an input file is opened."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from patcher.errors import BadArchive

MiB = 1 << 20
GiB = 1 << 30

# Limits are there for untrusted input; a trusted archive may pass them.
RAISE_HINT = "if the archive is trusted, raise the limit with {}"


@dataclass(frozen=True)
class Limits:
    """Hold the most a vendor zip or folder may declare or expand to.

    The real vendor zip (about 100 MB, 1,400 members) sits far below each
    bound; a zip bomb trips one of them from its central directory, and a
    zip whose headers lie about sizes trips them again while streaming. A
    folder is held to the same counts: a sparse file on disk can claim
    gigabytes it holds no data for.
    """

    max_members: int = 50_000
    max_total_size: int = 1 * GiB
    max_ratio: int = 100
    # Small files legitimately compress far better than 100:1 (a file of
    # blank lines, say); only members this large are ratio-checked.
    ratio_min_size: int = 1 * MiB

    @property
    def max_input_size(self) -> int:
        """The largest input file read: its members' limit, plus room for a header per member."""
        return self.max_total_size + self.max_members * KiB + MiB


KiB = 1 << 10

KINDS = {  # what a path that is not a regular file is, in messages
    stat.S_IFIFO: "a fifo (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def open_regular(path: Path, where: str, max_size: int, *, option: str = "--max-size",
                 name: str | None = None, inside: str | None = None) -> BinaryIO:
    """Open PATH for reading if it is a regular file of at most MAX_SIZE bytes; raise BadArchive otherwise.

    Only regular files are read, as tarfile's data filter has it: a fifo
    would block the read forever, /dev/zero never ends, a sparse file
    claims gigabytes it holds no data for. The path is checked first, then
    the file really opened (without blocking, without following a link the
    path was swapped for) is checked again, so a swap in between gains
    nothing. A link the user named is followed: it is theirs to give.
    NAME, for a file inside a tree, is how messages call it; INSIDE, that
    tree's real path, which the file must still resolve into (a member
    swapped since the listing for a link out of the tree is refused).
    """
    try:
        st = os.stat(path)
    except OSError as error:
        raise _unreadable(error, where, name) from None
    _check(st, where, max_size, option, name)
    real = os.path.realpath(path)
    if inside is not None and os.path.commonpath([real, inside]) != inside:
        raise BadArchive(f"'{name or path}' now points outside the tree (it was replaced after it was listed)",
                         where=where, hint="run again on a folder nothing else is changing")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags | getattr(os, "O_BINARY", 0))
    except OSError as error:
        raise _unreadable(error, where, name) from None
    try:
        _check(os.fstat(fd), where, max_size, option, name)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _unreadable(error: OSError, where: str, name: str | None) -> BadArchive:
    if name is not None:
        return BadArchive(f"cannot read '{name}': {error.strerror}", where=where)
    if isinstance(error, FileNotFoundError):
        return BadArchive("no such file", where=where)
    if isinstance(error, PermissionError):
        return BadArchive("cannot read the file: permission denied", where=where)
    return BadArchive(f"cannot read the file: {error.strerror}", where=where)


def _check(st: os.stat_result, where: str, max_size: int, option: str, name: str | None) -> None:
    kind = stat.S_IFMT(st.st_mode)
    subject = f"'{name}' is" if name is not None else "is"
    if kind != stat.S_IFREG:
        what = KINDS.get(kind, f"of file type {kind:#o}")
        raise BadArchive(f"{subject} {what}, not a regular file", where=where,
                         hint=None if name else "pass the vendor .zip, a build context, or an unpacked folder")
    if st.st_size > max_size:
        raise BadArchive(f"{subject} {st.st_size} bytes, more than the limit of {max_size}", where=where,
                         hint=f"if the input is trusted, raise the limit with {option}")
