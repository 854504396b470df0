"""What goes into an output, in which order, with which metadata.

Every output format lays out the same entries: the files sorted by path,
each parent folder emitted once just before its contents, modes reduced
to 0o755 or 0o644, one fixed timestamp. Nothing here depends on the
clock, the time zone, the umask, the locale or the order in which the
caller produced the files.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from patcher.archive.paths import parents, path_problem
from patcher.errors import BadArchive, OutputError

# Unchanged members are copied in blocks of this size, never whole.
CHUNK = 1 << 20

# Told how many content bytes were just copied into the output, chunk by
# chunk; the CLI draws a progress bar from it.
Progress = Callable[[int], None]

# 1980-01-01T00:00:00Z: the earliest time a zip can store, so one default
# serves every format.
DEFAULT_MTIME = 315532800

DIR_MODE = 0o755


def file_mode(executable: bool) -> int:
    """Return the normalised permission bits of a file."""
    return 0o755 if executable else 0o644


@dataclass(frozen=True)
class OutputFile:
    """Describe one file of the output: new bytes, or a stream of old ones."""

    path: str  # posix, relative to the context root
    executable: bool
    data: bytes | None = None  # new content (patched files, manifest) ...
    source: Callable[[], BinaryIO] | None = None  # ... or unchanged bytes to copy
    size: int | None = None  # required with source: tar headers need it up front

    def __post_init__(self) -> None:
        problem = path_problem(self.path)
        if problem or self.path.endswith("/"):
            raise ValueError(f"output path {self.path!r} {problem or 'ends with a slash'}")
        if (self.data is None) == (self.source is None):
            raise ValueError(f"{self.path}: give exactly one of data and source")
        if self.source is not None and (self.size is None or self.size < 0):
            raise ValueError(f"{self.path}: a source needs its size")
        if self.data is not None and self.size not in (None, len(self.data)):
            raise ValueError(f"{self.path}: size {self.size} but {len(self.data)} bytes of data")

    @property
    def length(self) -> int:
        """Return the number of bytes this file holds."""
        if self.data is not None:
            return len(self.data)
        assert self.size is not None
        return self.size

    @property
    def mode(self) -> int:
        """Return the normalised permission bits."""
        return file_mode(self.executable)

    def reader(self, progress: Progress | None = None) -> SizedReader:
        """Open the content as a stream held to the declared size, reporting reads to PROGRESS."""
        if self.data is not None:
            return SizedReader(self.path, io.BytesIO(self.data), len(self.data), progress)
        assert self.source is not None and self.size is not None
        return SizedReader(self.path, self.source(), self.size, progress)


class OutputFormat(Enum):
    """Name the kinds of output write_output can produce."""

    TAR = "tar"
    TAR_GZ = "tar.gz"
    ZIP = "zip"
    DIRECTORY = "directory"

    @classmethod
    def for_path(cls, path: Path) -> OutputFormat:
        """Return the format a destination's name asks for; a folder otherwise."""
        name = path.name.lower()
        if name.endswith((".tar.gz", ".tgz")):
            return cls.TAR_GZ
        if name.endswith(".tar"):
            return cls.TAR
        if name.endswith(".zip"):
            return cls.ZIP
        return cls.DIRECTORY


@dataclass(frozen=True)
class Entry:
    """One item of an output archive, in final order."""

    name: str  # archive path without a trailing slash
    mode: int
    file: OutputFile | None  # None for a folder

    @property
    def is_dir(self) -> bool:
        """Return whether this entry is a folder."""
        return self.file is None


def plan(files: Iterable[OutputFile], prefix: str = "") -> list[Entry]:
    """Return the entries of an archive holding FILES under PREFIX, in order.

    PREFIX is '' or a folder path ending in '/'. Raise ValueError for two
    files with one path, or a path used both as a file and a folder.
    """
    if prefix and (not prefix.endswith("/") or path_problem(prefix)):
        raise ValueError(f"bad archive prefix {prefix!r}: want 'folder/' or ''")
    by_path: dict[str, OutputFile] = {}
    for item in files:
        if item.path in by_path:
            raise ValueError(f"two output files named {item.path!r}")
        by_path[item.path] = item
    folders: set[str] = set()
    for path in by_path:
        folders.update(parents(prefix + path))
    entries = [Entry(prefix + path, item.mode, item) for path, item in by_path.items()]
    clash = sorted(folders & {entry.name for entry in entries})
    if clash:
        raise ValueError(f"output path {clash[0]!r} is both a file and a folder")
    entries.extend(Entry(name, DIR_MODE, None) for name in folders)
    # A folder sorts as 'name/' so it comes right before its own contents.
    entries.sort(key=lambda e: e.name + "/" if e.is_dir else e.name)
    return entries


def resolve_mtime(mtime: int | None) -> int:
    """Return MTIME, else SOURCE_DATE_EPOCH from the environment, else 1980."""
    if mtime is not None:
        if mtime < 0:
            raise ValueError(f"mtime must not be negative, got {mtime}")
        return mtime
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return DEFAULT_MTIME
    # ASCII digits only ('٣' is a digit to Python), and no more than a 64-bit count of seconds holds (CPython
    # refuses int() of thousands of digits).
    if not (raw.isascii() and raw.isdigit()) or len(raw.lstrip("0")) > 19:
        raise OutputError(
            f"SOURCE_DATE_EPOCH must be a whole number of seconds, got {raw[:40] + '...' if len(raw) > 40 else raw!r}",
            hint="unset it or give an integer such as 315532800",
        )
    return int(raw)


class SizedReader:
    """Read a file's content in bounded blocks, holding it to its size.

    A source that ends early or runs long means the input changed or a
    caller declared the wrong size; either would corrupt a tar silently,
    so both fail loudly.
    """

    def __init__(self, path: str, stream: BinaryIO, size: int, progress: Progress | None = None) -> None:
        self.path = path
        self._stream = stream
        self._size = size
        self._count = 0
        self._progress = progress

    def read(self, n: int | None = -1) -> bytes:
        """Return N bytes (at most CHUNK), fewer only at the end; b'' after it."""
        if n is None or n < 0 or n > CHUNK:
            n = CHUNK
        want = min(n, self._size - self._count)
        # Loop: a raw stream may return short reads, and tarfile takes a
        # short block for the end of the data.
        blocks: list[bytes] = []
        got = 0
        while got < want:
            try:
                data = self._stream.read(want - got)
            except OSError as exc:
                # Reading is the input's side; a failure there must not be
                # reported as a problem with the output.
                raise BadArchive(f"cannot read '{self.path}': {exc.strerror or exc}") from None
            if not data:
                raise BadArchive(
                    f"'{self.path}' ended after {self._count + got} of its {self._size} bytes"
                    " (did it change while being read?)"
                )
            blocks.append(data)
            got += len(data)
        self._count += got
        if self._progress is not None and got:
            self._progress(got)
        return b"".join(blocks)

    def finish(self) -> None:
        """Check that the source holds nothing past its size, then close it."""
        try:
            if self._count == self._size and self._stream.read(1):
                raise BadArchive(
                    f"'{self.path}' holds more than its declared {self._size} bytes"
                    " (did it change while being read?)"
                )
        finally:
            self.close()

    def close(self) -> None:
        """Close the underlying stream."""
        self._stream.close()

    def __enter__(self) -> SizedReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def fsync_dir(folder: Path) -> None:
    """Make the entries just created in FOLDER durable, where the file system allows it."""
    # Some file systems refuse to open or sync a folder; that costs only durability.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
