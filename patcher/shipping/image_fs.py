"""The image's file system as far as the build context decides it: which context file sits at which image path.

The base image's own files are unknown. What the reader knows is what the
build wrote: each context file placed at an image path (a ``Placement``,
with the steps that put it there), files the build wrote from elsewhere
(a redirection, ``COPY <<EOF``, ``touch``), and the folders it made or
filled. A folder the build created where nothing stood is *owned*: a path
under it that the build did not write is known to be absent. Elsewhere a
path the build did not touch may or may not exist in the base image, and
callers decide what to assume (and say so).
"""

from __future__ import annotations

import itertools
import posixpath
from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, Iterator


_MAX_HOPS = 40  # symbolic links Linux follows in one lookup before ELOOP
# Where a program's path takes more links than Linux follows (ELOOP, "Too many levels of symbolic links"):
# nothing is there, and nothing can be made there.
LOOPED = "/(too many levels of symbolic links)"
_MAX_ALIASES = 64  # paths one image path is shown at through links: a bound, far above what builds make


class Kind(Enum):
    """What stands at an image path, as far as the build tells."""

    DIR = "folder"
    FILE = "file"
    ABSENT = "absent"
    UNKNOWN = "unknown"  # the base image decides


@dataclass(frozen=True)
class Step:
    """One instruction or command that moved a context file on its way to an image path."""

    file: str  # "Dockerfile", or the context path of the script that ran it
    line: int
    command: str  # "COPY", "cp", "install", "mv", "ln", "rsync", ...
    hides_failure: tuple[str, ...] = ()
    stops_on_error: bool = True  # whether a failure here stops the build
    stage: str = ""  # the build stage it ran in
    order: int = 0  # when it ran, in the order the build runs
    path: str = ""  # the image path it put the file at (filled in by ImageFS.place)

    @property
    def in_script(self) -> bool:
        """Whether a shell command (not a COPY/ADD) did it."""
        return self.command not in ("COPY", "ADD")


@dataclass(frozen=True)
class Placement:
    """A context file at an image path, and how it got there."""

    source: str  # context path
    steps: tuple[Step, ...]
    order: int  # when it was written, in the order the build runs


def normalise(path: str) -> str:
    """An absolute image path without ``.``, ``..``, doubled or trailing slashes."""
    path = posixpath.normpath("/" + path.lstrip("/")) if path else "/"
    return "/" + path.lstrip("/")  # normpath keeps a leading "//"


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it, on a path-component boundary."""
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")


def self_and_parents(path: str) -> list[str]:
    """``path`` and each folder above it, up to ``/``: what ``under(path, folder)`` can be true for."""
    found = [path]
    while path != "/":
        path = posixpath.dirname(path)
        found.append(path)
    return found


class ImageFS:
    """The image paths one build stage holds, as far as the build context decides them.

    Every folder above a file (placed, or written from elsewhere) is in
    ``dirs``: writing a file makes its folders, removing a folder removes
    what is below it. So what stands at a path is found by looking up the
    path and its parents, never by scanning every file, and a build that
    places many files costs time in proportion to them.
    """

    def __init__(self) -> None:
        self.files: dict[str, Placement] = {}
        self.others: set[str] = set()  # files the build wrote from outside the context
        self.dirs: set[str] = {"/"}
        self.owned: set[str] = set()  # folders the build created: their contents are all known
        self.gone: set[str] = set()  # paths the build removed: absent until written again
        # Symbolic links 'ln -s' made: the link's path and the absolute path it points to. Reading or writing
        # through a link reaches its target, and what stands at the target shows at the link (kept as a mirror
        # at the link's own paths, so that a lookup of either path finds it).
        self.links: dict[str, str] = {}
        self.relative: dict[str, str] = {}  # link -> its target as ln was given it, where relative (mv re-reads it)

    def copy(self) -> ImageFS:
        """An independent copy, for a stage built FROM this one."""
        other = ImageFS()
        other.files, other.others = dict(self.files), set(self.others)
        other.dirs, other.owned, other.gone = set(self.dirs), set(self.owned), set(self.gone)
        other.links, other.relative = dict(self.links), dict(self.relative)
        return other

    def kind(self, path: str) -> Kind:
        """What stands at ``path`` (at its target, where it is a symbolic link)."""
        path = self.resolve(path)
        if under(path, LOOPED):
            return Kind.ABSENT
        if path in self.dirs:
            return Kind.DIR
        if path in self.files or path in self.others:
            return Kind.FILE
        if self.gone and not self.gone.isdisjoint(self_and_parents(path)):
            return Kind.ABSENT
        parent = posixpath.dirname(path)
        while True:
            if parent in self.owned:
                return Kind.ABSENT
            if parent in self.files or parent in self.others:
                return Kind.ABSENT  # under a file: nothing can be there
            if parent == "/" or parent in self.dirs:
                return Kind.UNKNOWN
            parent = posixpath.dirname(parent)

    def below(self, folder: str) -> list[tuple[str, Placement]]:
        """The placements inside ``folder`` (not the folder itself), sorted by path."""
        folder = normalise(folder)
        return sorted((p, placed) for p, placed in self.files.items() if p != folder and under(p, folder))

    def resolve(self, path: str, *, last: bool = True) -> str:
        """The path the kernel reaches for ``path``, following the build's symbolic links on the way.

        ``last`` False leaves the final component alone (``rm LINK``, ``mv X
        LINK`` and ``ln -f`` act on a link, not on what it points to). A loop
        of links (more than Linux's 40 hops: ELOOP) leaves the path as written.
        """
        path = normalise(path)
        if not self.links:
            return path
        parts = path.split("/")[1:] if path != "/" else []
        current, index, hops = "/", 0, 0
        while index < len(parts):
            candidate = posixpath.join(current, parts[index])
            target = self.links.get(candidate)
            if target is None or (not last and index == len(parts) - 1):
                current, index = candidate, index + 1
                continue
            hops += 1
            if hops > _MAX_HOPS:
                return path
            parts = (target.split("/")[1:] if target != "/" else []) + parts[index + 1:]
            current, index = "/", 0
        return current

    def physical(self, path: str) -> str:
        """``path`` as the kernel walks it (a program's operand, not ``cd``): ``..`` leaves the folder a link
        leads to, not the folder the link is in (``/dest/k/../c.py`` with ``k -> /dest/a/b`` is
        ``/dest/a/c.py``). The last component stays as written, a link or not, for the caller to follow.

        One walk, each link followed once where a ``..`` or a later name needs it: the path of a hostile
        script's 30,000 names and as many ``..`` costs what one ``resolve`` of it does.
        """
        parts = path.split("/")
        if not self.links or ".." not in parts:
            return normalise(path)
        current, pending, hops = "/", "", 0  # current: the kernel's folder so far; pending: a name not yet followed
        for part in parts:
            if part in ("", "."):
                continue
            if pending:
                candidate = posixpath.join(current, pending)
                target = self.links.get(candidate)
                if target is not None:
                    hops += 1
                    if hops > _MAX_HOPS:
                        return LOOPED + normalise(path)  # ELOOP: the program fails on it
                    candidate = self.resolve(target)
                current, pending = candidate, ""
            if part == "..":
                current = posixpath.dirname(current)
            else:
                pending = part
        return posixpath.join(current, pending) if pending else current

    def aliases(self, path: str) -> list[str]:
        """``path`` (reached through no link) and every path that shows it through the build's links, itself first."""
        found = [path]
        if not self.links:
            return found
        by_target: dict[str, list[str]] = {}
        for link, target in self.links.items():
            # A link inside its own target (ln -s . loop) shows the folder again and again: not mirrored.
            if not under(link, target):
                by_target.setdefault(target, []).append(link)
        index = 0
        while index < len(found):
            current = found[index]
            index += 1
            for target in self_and_parents(current):
                for link in by_target.get(target, ()):
                    alias = link + (current[len(target):] if target != "/" else current)
                    if alias not in found:
                        found.append(alias)
                        if len(found) >= _MAX_ALIASES:
                            # Past the bound a path is not shown at more links (a hostile script's thousand links
                            # to one folder); reading through any of them still reaches it (resolve).
                            return found
        return found

    def make_dir(self, path: str, new: bool = False) -> None:
        """Create ``path`` and its parents; ``new``: the caller knows it was not there (``mkdir`` without ``-p``).

        A folder created where nothing could stand, or one known to be new,
        is owned: whatever the build does not write into it is absent.
        """
        for alias in self.aliases(self.resolve(path)):
            self._make_dir(alias, new)

    def _make_dir(self, path: str, new: bool) -> None:
        if new and path not in self.dirs:
            self.owned.add(path)
        current = path
        while current not in self.dirs:
            if self.kind(current) is Kind.ABSENT:
                self.owned.add(current)
            self.dirs.add(current)
            current = posixpath.dirname(current)
        self._revive(path)

    def place(self, path: str, placement: Placement, *, through: bool = True) -> None:
        """Write a context file at ``path``, replacing what stood there.

        ``through`` False: a symbolic link at ``path`` is replaced (``mv``),
        not written through (``cp``, a redirection).
        """
        for alias in self._written(path, through):
            self._make_dir(posixpath.dirname(alias), False)
            self.others.discard(alias)
            self._revive(alias)
            held = placement
            if held.steps and not held.steps[-1].path:
                held = replace(held, steps=(*held.steps[:-1], replace(held.steps[-1], path=alias)))
            self.files[alias] = held

    def write_other(self, path: str, *, through: bool = True) -> None:
        """Write a file that does not come from the context at ``path``."""
        for alias in self._written(path, through):
            self._make_dir(posixpath.dirname(alias), False)
            self._revive(alias)
            self.files.pop(alias, None)
            self.others.add(alias)

    def _written(self, path: str, through: bool) -> list[str]:
        """The paths a write at ``path`` changes: its target and every path that shows it."""
        path = self.resolve(path, last=False)
        if path in self.links and not through:
            self._remove(path, own_links=True)
        return self.aliases(self.resolve(path))

    def remove(self, path: str) -> list[str]:
        """Remove ``path`` and everything under it; return the placements removed.

        A symbolic link at ``path`` is removed itself, its target kept.
        """
        path = self.resolve(path, last=False)
        removed: list[str] = []
        if path in self.links:
            # The link goes, and with it what it showed at every path that shows the link (through a link to
            # its folder).
            for alias in self.aliases(path):
                if alias == path or self.links.get(alias) != path:  # a link to this link stays, leading nowhere
                    removed += self._remove(alias, own_links=True)
            return removed
        for number, alias in enumerate(self.aliases(path)):
            # Where the path is shown through a link, the link stays (pointing at nothing for now).
            removed += self._remove(alias, own_links=number == 0)
        for link, target in list(self.links.items()):
            # A link to something inside what went leads nowhere now: what it showed goes too (the link stays).
            if link in self.links and under(target, path) and not under(link, path):
                for alias in self.aliases(link):
                    removed += self._remove(alias, own_links=False)
        return removed

    def remove_all(self, paths: Iterable[str]) -> list[str]:
        """Remove each of ``paths`` as ``remove`` does; return the placements removed.

        One pass over what the build holds for all the paths no link shows or leads into (find -delete of
        thousands of files would otherwise pass over them once a file); the others one by one, as ``remove``.
        """
        targets = {folder for target in self.links.values() for folder in self_and_parents(target)}
        removed: list[str] = []
        plain: set[str] = set()
        for path in paths:
            path = self.resolve(path, last=False)
            if path == "/" or path in self.links or path in targets or len(self.aliases(path)) > 1:
                removed += self.remove(path)
            else:
                plain.add(path)
        if not plain:
            return removed

        def went(path: str) -> bool:
            return not plain.isdisjoint(self_and_parents(path))

        gone = [p for p in self.files if went(p)]
        for p in gone:
            del self.files[p]
        self.others = {p for p in self.others if not went(p)}
        self.links = {k: v for k, v in self.links.items() if not went(k)}
        self.dirs = {d for d in self.dirs if not went(d)}
        self.owned = {d for d in self.owned if not went(d)}
        self.gone = {g for g in self.gone if not went(g)} | plain
        return removed + gone

    def made(self, path: str) -> bool:
        """Whether the build made ``path`` or a folder above it: nothing the base image holds can be below it."""
        return not self.owned.isdisjoint(self_and_parents(path))

    def _remove(self, path: str, own_links: bool) -> list[str]:
        gone = [p for p in self.files if under(p, path)]
        for p in gone:
            del self.files[p]
        self.others = {p for p in self.others if not under(p, path)}
        self.links = {k: v for k, v in self.links.items() if not under(k, path) or (k == path and not own_links)}
        if path != "/":
            self.dirs = {d for d in self.dirs if not under(d, path)}
            self.owned = {d for d in self.owned if not under(d, path)}
            self.gone = {g for g in self.gone if not under(g, path)} | {path}
        return gone

    def _revive(self, path: str) -> None:
        """Writing at ``path`` brings it and its folders back from a removal."""
        if self.gone:
            self.gone.difference_update(self_and_parents(path))  # callers pass it normalised

    def names(self) -> list[str]:
        """Every path the build knows of (files and folders), for glob matching."""
        return sorted(self.unsorted_names())

    def unsorted_names(self) -> Iterator[str]:
        """Every path the build knows of, in no order (each once: a path is a file or a folder)."""
        return itertools.chain(self.files, self.others, self.dirs)
