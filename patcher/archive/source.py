"""Open a vendor zip, a tar or tar.gz build context, or a folder as a read-only SourceTree."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.archive.limits import Limits, open_regular
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
    BadArchive if PATH is missing, unreadable, unsafe, past the limits, not
    a regular file or folder (a fifo, a device, a socket: refused before
    anything reads it, so none can block or stream forever), or holds no
    unique Dockerfile. A folder is held to the archives' counts: a sparse
    file on disk can claim gigabytes it holds no data for.
    """
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        raise BadArchive("no such file or folder", where=str(path)) from None
    except OSError as error:
        raise BadArchive(f"cannot read it: {error.strerror}", where=str(path)) from None
    if is_folder:
        yield DirSource(path, limits)
        return
    fp = open_regular(path, str(path), limits.max_input_size)
    try:
        reader = TarSource if is_tar(path) else ZipSource
    except BaseException:
        fp.close()
        raise
    with reader(path, limits, fp) as source:
        yield source
