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
    """Return the key under which case-insensitive, normalisation-insensitive file systems see PATH.

    Unicode's canonical caseless match (NFD, case fold, NFD again; NFC here,
    which tells the same names apart): APFS and HFS+ store a name in one
    normalisation, so 'café' written precomposed (NFC) and decomposed (NFD)
    is one file on macOS, and macOS and Windows checkouts ignore letter case.
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", path).casefold())


COLLISION_HINT = "rename one of them: a macOS or Windows checkout keeps only one"


def check_collisions(where: str, files: Iterable[str], dirs: Iterable[str], hint: str = COLLISION_HINT) -> None:
    """Raise BadArchive if paths clash as file and folder, by letter case or by Unicode normalisation.

    FILES and DIRS are slash-free paths; every ancestor of a file counts as
    a folder even without an entry of its own. ``hint`` says how to fix it
    in the kind of input read (a zip is re-created, a folder renamed in).
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
            raise BadArchive(_collision(other, path, file_set), where=where, hint=hint)


def _collision(first: str, second: str, files: set[str]) -> str:
    """Say how two paths that fold to one name differ, and where they would collide."""
    one_normalisation = unicodedata.is_normalized("NFC", first) == unicodedata.is_normalized("NFC", second)
    same_letters = unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", second)
    if same_letters:
        how = "are one name in two Unicode normalisations (NFC and NFD) and would collide on macOS file systems"
    elif one_normalisation:
        how = "differ only in letter case and would collide on case-insensitive file systems"
    else:
        how = ("differ only in letter case and Unicode normalisation and would collide on case-insensitive "
               "file systems")
    kinds = [path in files for path in (first, second)]
    if kinds[0] != kinds[1]:
        how += f" (the {'first' if kinds[0] else 'second'} is a file, the other a folder)"
    return f"members '{_shown(first, same_letters or not one_normalisation)}' and " \
           f"'{_shown(second, same_letters or not one_normalisation)}' {how}"


def _shown(name: str, escaped: bool) -> str:
    """Return NAME for a message; with ``escaped``, non-ASCII as escapes, so two normalisations look different."""
    return name.encode("ascii", "backslashreplace").decode("ascii") if escaped else printable(name)


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
