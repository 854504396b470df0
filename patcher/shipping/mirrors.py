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


def find_mirrors(tree: SourceTree, shipped: str, extra: tuple[str, ...] = ()) -> MirrorGroup:
    """Group ``shipped`` with the root-level file of the same name and any ``extra`` paths."""
    name = posixpath.basename(shipped)
    candidates = [name, *extra]
    mirrors = tuple(dict.fromkeys(p for p in candidates if p != shipped and tree.exists(p)))
    return MirrorGroup(shipped, mirrors)
