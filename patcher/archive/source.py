"""Open a vendor zip or folder as a read-only SourceTree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.archive.limits import Limits
from patcher.archive.tree import SourceFile, SourceTree
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive

__all__ = ["SourceFile", "SourceTree", "open_source"]


@contextmanager
def open_source(path: Path, limits: Limits = Limits()) -> Iterator[SourceTree]:
    """Open PATH, a zip file or a folder, as the tree of its build context.

    A zip is recognised by its content, not its name. Raise BadArchive if
    PATH is missing, unreadable, unsafe or holds no unique Dockerfile.
    Limits apply to zips only; a folder on disk cannot be a zip bomb.
    """
    if path.is_dir():
        yield DirSource(path)
    elif path.exists():
        with ZipSource(path, limits) as source:
            yield source
    else:
        raise BadArchive("no such file or folder", where=str(path))
