"""Rules for member paths, shared by the readers and the writer.

A path here is posix, relative to the build context, with no empty, '.'
or '..' component. Anything else could escape the output folder, land in
a different place on another operating system, or collide with a
sibling on a case-insensitive file system.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from patcher.errors import BadArchive

DOCKERFILE = "Dockerfile"

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def path_problem(name: str) -> str | None:
    """Return why NAME is not a safe relative posix path, or None if it is.

    A trailing slash (a folder entry in a zip) is allowed.
    """
    if not name or name == "/":
        return "has an empty name"
    if _CONTROL.search(name):
        return "has a control character in its name"
    if "\\" in name:
        # Windows tools treat it as a separator, so 'a\\..\\b' can escape.
        return "has a backslash in its name"
    if name.startswith("/"):
        return "has an absolute path"
    if _DRIVE.match(name):
        return "has a drive letter"
    parts = name[:-1].split("/") if name.endswith("/") else name.split("/")
    if ".." in parts:
        return "escapes the tree with a '..' component"
    if "" in parts or "." in parts:
        return "has an empty or '.' path component"
    return None


def printable(name: str) -> str:
    """Return NAME with control characters escaped, for one-line messages."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


def parents(path: str) -> list[str]:
    """Return the ancestor folders of PATH, outermost first, without slashes."""
    parts = path.rstrip("/").split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def fold(path: str) -> str:
    """Return the key under which case-insensitive file systems see PATH."""
    # NFC as well as casefold: macOS stores names decomposed, so 'é' written
    # two ways would also land on one file there.
    return unicodedata.normalize("NFC", path).casefold()


def check_collisions(where: str, files: Iterable[str], dirs: Iterable[str]) -> None:
    """Raise BadArchive if paths clash as file and folder or by letter case.

    FILES and DIRS are slash-free paths; every ancestor of a file counts as
    a folder even without an entry of its own.
    """
    file_set = set(files)
    dir_set = set(dirs)
    for path in file_set:
        dir_set.update(parents(path))
    clash = sorted(file_set & dir_set)
    if clash:
        raise BadArchive(f"member '{clash[0]}' is both a file and a folder", where=where)
    seen: dict[str, str] = {}
    for path in sorted(file_set | dir_set):
        other = seen.setdefault(fold(path), path)
        if other != path:
            raise BadArchive(
                f"members '{other}' and '{path}' differ only in letter case"
                " and would collide on case-insensitive file systems",
                where=where,
            )


def find_context_root(where: str, files: Iterable[str]) -> str:
    """Return the folder holding the shallowest Dockerfile, as 'a/b/' or ''.

    Raise BadArchive when there is no Dockerfile, or when several folders
    hold one at the shallowest depth, since nothing says which to build.
    """
    roots = sorted(
        {p[: -len(DOCKERFILE)] for p in files if p == DOCKERFILE or p.endswith("/" + DOCKERFILE)}
    )
    if not roots:
        raise BadArchive(
            f"no {DOCKERFILE} found",
            where=where,
            hint="the build context is the folder holding the Dockerfile",
        )
    depth = min(r.count("/") for r in roots)
    shallowest = [r for r in roots if r.count("/") == depth]
    if len(shallowest) > 1:
        listed = ", ".join(f"'{r}'" for r in shallowest)
        raise BadArchive(
            f"several candidate build contexts at the same depth: {listed}",
            where=where,
            hint="keep one folder with a Dockerfile at the top",
        )
    return shallowest[0]
