"""Open a vendor zip or folder as a read-only SourceTree."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.archive.limits import Limits, open_regular
from patcher.archive.tree import SourceFile, SourceTree
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive

__all__ = ["SourceFile", "SourceTree", "open_source"]


@contextmanager
def open_source(path: Path, limits: Limits = Limits()) -> Iterator[SourceTree]:
    """Open PATH, a zip file or a folder, as the tree of its build context.

    A zip is recognised by its content, not its name. Raise BadArchive if
    PATH is missing, unreadable, unsafe, past the limits, not a regular
    file or folder (a fifo, a device, a socket: refused before anything
    reads it, so none can block or stream forever), or holds no unique
    Dockerfile.
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
    with ZipSource(path, limits, open_regular(path, str(path), limits.max_input_size)) as source:
        yield source
