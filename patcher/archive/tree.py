"""The read-only view of a vendor tree that every later stage works on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO, Mapping, Protocol, Sequence


@dataclass(frozen=True)
class SourceFile:
    """Describe one regular file of the build context."""

    path: str  # posix, relative to the context root: "qwen3_6_scripts/paged_attn.py"
    size: int
    executable: bool


class SourceTree(Protocol):
    """Read files of a build context in place, without extracting it.

    Paths are relative to the context root, the folder holding the
    Dockerfile. Asking for a path that is not a file of the tree raises
    KeyError, as zipfile does for an unknown name.
    """

    label: str  # how messages name the input: the zip file name or the folder

    def files(self) -> Sequence[SourceFile]:
        """Return every regular file, sorted by path; folders are implied."""
        ...

    def read(self, path: str) -> bytes:
        """Return the whole content of PATH."""
        ...

    def open(self, path: str) -> BinaryIO:
        """Return a stream over the content of PATH, for large files."""
        ...

    def exists(self, path: str) -> bool:
        """Return whether PATH is a file of the tree."""
        ...

    def sha256(self) -> str | None:
        """Return the hex sha256 of the input zip file, or None for a folder."""
        ...


class IndexedTree:
    """What ZipSource and DirSource share: an index of files by path, read through ``open``.

    Subclasses fill ``_members`` (path -> (SourceFile, where it lives)) and
    ``_files`` (the SourceFiles, sorted by path), and implement ``open``.
    """

    _members: Mapping[str, tuple[SourceFile, Any]]
    _files: list[SourceFile]

    def files(self) -> Sequence[SourceFile]:
        """Return every regular file of the context, sorted by path."""
        return list(self._files)

    def exists(self, path: str) -> bool:
        """Return whether PATH is a file of the context."""
        return path in self._members

    def read(self, path: str) -> bytes:
        """Return the whole content of PATH, through ``open`` and its checks."""
        with self.open(path) as stream:
            return stream.read()

    def open(self, path: str) -> BinaryIO:
        """Return a stream over PATH."""
        raise NotImplementedError
