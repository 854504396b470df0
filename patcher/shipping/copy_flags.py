"""What ``COPY --exclude`` and ``COPY --parents`` change in the files a COPY places, as BuildKit reads them.

``--exclude=PATTERN`` (repeatable, COPY and ADD) leaves files out. Each
pattern is a ``.dockerignore`` pattern (moby/patternmatcher: ``*`` within a
name, ``**`` across folders, ``!`` takes back, a folder leaves out all
below it), matched against each file's path *below the source it is copied
from*, not below the context root: with ``COPY --exclude=*.pyc src/ /d/``
only ``src/x.pyc`` is left out, not ``src/sub/y.pyc`` (``**/*.pyc`` is;
moby/buildkit#5509). BuildKit never matches a source itself, only what is
below it, so a file named as a source, or matched by a source's wildcard,
is copied whatever the patterns (moby/buildkit#5489: its reference says a
wildcard's match is left out; BuildKit copies it). The reader copies it
too and notes the line as unread, so a verdict never rests on it.

``--parents`` (COPY only) keeps the folders of each source below the
context root, or below a ``/./`` written in it (rsync's pivot):
``COPY --parents s/a/x.py /d/`` places ``/d/s/a/x.py``, and
``COPY --parents ./s/./a/x.py /d/`` places ``/d/a/x.py``. The source is
then a pattern below that root (a folder takes all below it) and the
destination is always a folder; a source that matches nothing copies
nothing and is no error (moby/buildkit#4900).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from .docker_syntax import Instruction
from .dockerignore import IgnoreRule, is_ignored, pattern_rules

# The note on a source whose wildcard matches a file an --exclude pattern names (see above).
WILDCARD_MATCH_EXCLUDED = ("matches a file an --exclude pattern names: BuildKit copies it (it matches the patterns "
                           "below each source only), its reference says it does not")
# Go's strconv.ParseBool, which reads a --parents=VALUE.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True)
class CopyFlags:
    """A COPY's --exclude rules and whether it keeps its sources' folders."""

    exclude: tuple[IgnoreRule, ...] = ()
    parents: bool = False

    def excluded(self, below: str) -> bool:
        """Whether the file at BELOW (its path below the copied source; "" for the source itself) is left out."""
        return bool(below) and bool(self.exclude) and is_ignored(self.exclude, below)

    def excludes_match(self, path: str) -> bool:
        """Whether a pattern names the context file PATH (by its path or its name), which a wildcard matched.

        BuildKit copies it all the same; its reference says it would not.
        """
        return bool(self.exclude) and (is_ignored(self.exclude, path)
                                       or is_ignored(self.exclude, posixpath.basename(path)))


def read_copy_flags(instruction: Instruction) -> CopyFlags | str:
    """The COPY's flags, or why the reader does not follow them (the end of an "unread" note)."""
    # BuildKit drops an empty pattern.
    patterns = [value.strip() for name, value in instruction.flags if name == "exclude" and value and value.strip()]
    for pattern in patterns:
        if "$" in pattern:
            # Whether BuildKit substitutes variables in --exclude has changed between releases.
            return f"--exclude={pattern}, whose variable BuildKit may or may not substitute"
        if pattern.lstrip("!").startswith("/") or pattern == "!":
            # The paths below a source never start with '/'; a lone '!' stops the build.
            return f"--exclude={pattern}, a pattern BuildKit matches against no path below a source"
    parents = False
    for name, value in instruction.flags:
        if name != "parents":
            continue
        if instruction.keyword != "COPY":
            return "--parents, which only COPY takes"
        if value is not None and value not in _TRUE | _FALSE:
            return f"--parents={value}, which is not a true or false BuildKit reads"
        parents = value is None or value in _TRUE
    return CopyFlags(pattern_rules(patterns, f"line {instruction.line}: --exclude"), parents)


def parents_root(source: str) -> tuple[str, str]:
    """(root, pattern) of a ``--parents`` source: the context folder whose layout is kept, and the pattern below it.

    The root is ``""`` for the context root; the pattern is ``""`` for all of the root.
    """
    pivot, found, pattern = source.partition("/./")
    if not found:
        pivot, pattern = "", source
    root = posixpath.normpath("/" + pivot).lstrip("/")
    return root, posixpath.normpath("/" + pattern).lstrip("/")
