"""Find the stale copies that look like a shipped file but never reach the image."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..archive.tree import SourceTree


@dataclass(frozen=True)
class MirrorGroup:
    """A shipped file and the copies of it that must stay byte-identical."""

    shipped: str
    mirrors: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """The shipped copy first, then the mirrors."""
        return (self.shipped, *self.mirrors)


def line_endings_only(a: bytes, b: bytes) -> bool:
    """Whether two different copies would be equal but for CRLF versus LF."""
    return a != b and a.replace(b"\r\n", b"\n") == b.replace(b"\r\n", b"\n")


def find_mirrors(tree: SourceTree, shipped: str) -> MirrorGroup:
    """Group ``shipped`` with the root-level file of the same name, when there is one."""
    name = posixpath.basename(shipped)
    mirrors = (name,) if name != shipped and tree.exists(name) else ()
    return MirrorGroup(shipped, mirrors)
