"""Read the vendor zip safely; write the build context deterministically.

Reading: open_source() gives a SourceTree (ZipSource, TarSource for a
.tar or .tar.gz context, or DirSource) that validates the input up front
and streams members without extracting.
Writing: write_output() packs OutputFiles as tar, tar.gz, zip or folder,
byte-identical for identical inputs, and atomically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from patcher.archive.dir_source import DirSource
from patcher.archive.layout import OutputFile
from patcher.archive.limits import Limits
from patcher.archive.source import open_source
from patcher.archive.tree import SourceFile, SourceTree
from patcher.archive.zip_source import ZipSource

if TYPE_CHECKING:
    from patcher.archive.writer import OutputFormat, write_output

__all__ = [
    "DirSource",
    "Limits",
    "OutputFile",
    "OutputFormat",
    "SourceFile",
    "SourceTree",
    "ZipSource",
    "open_source",
    "write_output",
]


def __getattr__(name: str) -> Any:
    # The writers (tar, gzip threads, zip, folder) load on first use: the
    # commands that only read a tree never do.
    if name in ("OutputFormat", "write_output"):
        from patcher.archive import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
