"""Open a vendor zip, a tar or tar.gz build context, or a folder as a read-only SourceTree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.archive.limits import Limits
from patcher.archive.tar_source import TarSource, is_tar
from patcher.archive.tree import SourceFile, SourceTree
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive

__all__ = ["SourceFile", "SourceTree", "open_source"]


@contextmanager
def open_source(path: Path, limits: Limits = Limits()) -> Iterator[SourceTree]:
    """Open PATH, a zip, a tar or tar.gz, or a folder, as the tree of its build context.

    A file is recognised by its content, not its name: a tar or gzip
    stream by its first bytes, anything else is read as a zip. Raise
    BadArchive if PATH is missing, unreadable, unsafe or holds no unique
    Dockerfile. Limits apply to archives only; a folder on disk cannot be a bomb.
    """
    if path.is_dir():
        yield DirSource(path)
    elif path.exists():
        with (TarSource if is_tar(path) else ZipSource)(path, limits) as source:
            yield source
    else:
        raise BadArchive("no such file or folder", where=str(path))
