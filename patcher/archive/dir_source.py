"""Read an unpacked vendor tree from a folder, with the zip's safety rules.

The context root is found as in a zip: the folder holding the shallowest
Dockerfile, which must be unique. Unlike a zip, files beside the context
are ignored rather than refused: a folder on disk is a workspace, where
stray files next to the vendor tree are normal and nothing is repacked
from them. Inside the context only regular files and folders are read,
as tarfile's data filter has it: a fifo, device or socket there is
refused by name (apply would copy it into the output, and reading one
blocks or never ends), and the zip's limits on the number and total size
of files hold (a sparse file claims gigabytes it holds no data for).
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from patcher.archive.limits import KINDS, Limits, open_regular
from patcher.archive.paths import DOCKERFILE, check_collisions, path_problem, printable
from patcher.archive.tree import IndexedTree, SourceFile
from patcher.errors import BadArchive

# Version-control metadata is never part of a build context.
IGNORED = frozenset({".git"})


class DirSource(IndexedTree):
    """Expose the build context inside a folder as a SourceTree."""

    def __init__(self, folder: Path, limits: Limits = Limits()) -> None:
        self.label = str(folder)
        self._limits = limits
        self._total = 0
        self.root = _find_root(folder, self.label)
        self._real_root = os.path.realpath(self.root)
        found: dict[str, tuple[SourceFile, Path]] = {}
        dirs: list[str] = []
        self._walk(self.root, "", found, dirs)
        check_collisions(self.label, found, dirs)
        self._members = dict(sorted(found.items()))
        self._files = [entry[0] for entry in self._members.values()]

    def __enter__(self) -> DirSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def open(self, path: str) -> BinaryIO:
        """Return a stream over PATH, held to the size the folder was listed with.

        Opened as an input file is (``open_regular``): a file swapped for a
        fifo or device since the listing is refused, and one that grew is
        read only as far as it was listed.
        """
        entry, location = self._members[path]
        stream = open_regular(location, self.label, self._limits.max_total_size, name=path, inside=self._real_root)
        return io.BufferedReader(_Listed(stream, entry.size))

    def sha256(self) -> str | None:
        """Return None: a folder has no single file to fingerprint."""
        return None

    def _walk(
        self,
        folder: Path,
        rel: str,
        found: dict[str, tuple[SourceFile, Path]],
        dirs: list[str],
    ) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise BadArchive(
                f"cannot list '{rel or '.'}': {exc.strerror}", where=self.label
            ) from None
        for entry in entries:
            if entry.name in IGNORED:
                continue
            path = rel + entry.name
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(path).decode("ascii", "backslashreplace")
                raise BadArchive(
                    f"file name '{shown}' is not valid UTF-8", where=self.label
                ) from None
            problem = path_problem(path)
            if problem:
                raise BadArchive(f"file '{printable(path)}' {problem}", where=self.label)
            location = Path(entry.path)
            if entry.is_symlink():
                found[path] = (self._linked_file(path, location), location)
                self._count(path, found[path][0].size, len(found))
            elif entry.is_dir(follow_symlinks=False):
                dirs.append(path)
                self._walk(location, path + "/", found, dirs)
            elif entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                found[path] = (SourceFile(path, st.st_size, bool(st.st_mode & 0o111)), location)
                self._count(path, st.st_size, len(found))
            else:
                kind = stat.S_IFMT(entry.stat(follow_symlinks=False).st_mode)
                raise BadArchive(
                    f"'{path}' is {KINDS.get(kind, 'a special file')}, not a regular file or folder",
                    where=self.label,
                )

    def _count(self, path: str, size: int, files: int) -> None:
        """Hold the folder to the limits a zip is held to, file by file as it is listed."""
        self._total += size
        if files > self._limits.max_members:
            raise BadArchive(f"the folder holds more than {self._limits.max_members} files", where=self.label,
                             hint="if the folder is trusted, raise the limit with --max-members")
        if self._total > self._limits.max_total_size:
            raise BadArchive(
                f"its files hold more than {self._limits.max_total_size} bytes in all (at '{printable(path)}')",
                where=self.label, hint="if the folder is trusted, raise the limit with --max-size")

    def _linked_file(self, path: str, location: Path) -> SourceFile:
        """Return the file a symlink inside the tree points to, as a copy."""
        target = os.path.realpath(location)
        if os.path.commonpath([target, self._real_root]) != self._real_root:
            raise BadArchive(
                f"'{path}' is a symbolic link pointing outside the tree",
                where=self.label,
                hint="replace it with the file it points to",
            )
        # What the listing leaves out (.git, at any depth) is not reached through a link either.
        ignored = [part for part in os.path.relpath(target, self._real_root).split(os.sep) if part in IGNORED]
        if ignored:
            raise BadArchive(f"'{path}' is a symbolic link into '{ignored[0]}', which is not part of a build context",
                             where=self.label, hint="replace it with the file it points to")
        try:
            st = os.stat(target)
        except OSError:
            raise BadArchive(f"'{path}' is a broken symbolic link", where=self.label) from None
        if stat.S_ISDIR(st.st_mode):
            # Following folder links risks cycles and duplicate content;
            # the output has no links, so say so instead of guessing.
            raise BadArchive(
                f"'{path}' is a symbolic link to a folder, which is not supported",
                where=self.label,
            )
        if not stat.S_ISREG(st.st_mode):
            raise BadArchive(
                f"'{path}' is a symbolic link to something that is not a regular file (a device, fifo or socket)",
                where=self.label,
            )
        return SourceFile(path, st.st_size, bool(st.st_mode & 0o111))


def _find_root(folder: Path, label: str) -> Path:
    """Return the shallowest folder under FOLDER holding a Dockerfile."""
    if not folder.is_dir():
        raise BadArchive("no such folder", where=label)
    level = [folder]
    while level:
        holders = [d for d in level if (d / DOCKERFILE).is_file()]
        if len(holders) == 1:
            return holders[0]
        if holders:
            listed = ", ".join(f"'{d.relative_to(folder).as_posix()}/'" for d in holders)
            raise BadArchive(
                f"several candidate build contexts at the same depth: {listed}",
                where=label,
                hint="point at the folder holding the Dockerfile",
            )
        level = [
            Path(e.path)
            for d in level
            for e in sorted(_scandir(d), key=lambda e: e.name)
            if e.name not in IGNORED and e.is_dir(follow_symlinks=False)
        ]
    raise BadArchive(
        f"no {DOCKERFILE} found",
        where=label,
        hint="the build context is the folder holding the Dockerfile",
    )


def _scandir(folder: Path) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(folder))
    except OSError:
        # An unreadable folder beside the context cannot hold it anyway;
        # one inside it is reported when the context is read.
        return []


class _Listed(io.RawIOBase):
    """Read a file no further than the size it was listed with."""

    def __init__(self, stream: BinaryIO, size: int) -> None:
        super().__init__()
        self._stream = stream
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "WriteableBuffer") -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._left)
        if want <= 0:
            return 0
        data = self._stream.read(want)
        view[:len(data)] = data
        self._left -= len(data)
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()
