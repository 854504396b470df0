"""Validate every member of a zip from its central directory, before any content is read.

Names, types, flags, compression methods and declared sizes are checked
for each entry, so a bad zip fails before any work is done.

Context rule: the context root is the folder holding the shallowest
Dockerfile, which must be unique; every member must lie inside it (or be
a folder entry above it). A zip therefore has one top folder, or none
when the Dockerfile sits at the zip root. Members beside the context
would be dropped from a repacked zip, so they are refused rather than
silently lost.
"""

from __future__ import annotations

import stat
import zipfile

from patcher.archive.limits import RAISE_HINT, Limits
from patcher.archive.paths import check_collisions, parents, path_problem, printable
from patcher.archive.tree import SourceFile
from patcher.archive.zip_directory import too_many_members
from patcher.errors import BadArchive

ZIP_COLLISION_HINT = "re-create the zip with one of them renamed: a macOS or Windows checkout keeps only one"
_FLAG_ENCRYPTED = 0x1
_FLAG_PATCHED_DATA = 0x20
_FLAG_STRONG_ENCRYPTION = 0x40
_FLAG_UTF8 = 0x800


def _supported_methods() -> dict[int, str]:
    methods = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
    # bzip2 and lzma are optional modules of CPython builds; accept them
    # exactly when zipfile can decompress them here.
    try:
        import bz2  # noqa: F401

        methods[zipfile.ZIP_BZIP2] = "bzip2"
    except ImportError:
        pass
    try:
        import lzma  # noqa: F401

        methods[zipfile.ZIP_LZMA] = "lzma"
    except ImportError:
        pass
    return methods


SUPPORTED_METHODS = _supported_methods()

_SPECIAL_TYPES = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a fifo",
    stat.S_IFSOCK: "a socket",
}


def check_members(
    infos: list[zipfile.ZipInfo], label: str, limits: Limits
) -> dict[str, SourceFile]:
    """Validate every entry; return the files by full zip path."""
    if not infos:
        raise BadArchive("the zip holds no members", where=label)
    if len(infos) > limits.max_members:
        raise too_many_members(len(infos), label, limits)
    files: dict[str, SourceFile] = {}
    dirs: set[str] = set()
    offsets: dict[int, str] = {}
    total = 0
    for info in infos:
        name = info.orig_filename
        _check_name(info, label)
        is_dir = _check_type(info, label)
        _check_flags(info, label)
        if is_dir:
            dirs.add(name.rstrip("/"))
            continue
        if name in files:
            raise BadArchive(f"member '{name}' appears twice", where=label)
        # Entries sharing one local header are the overlapping-file zip
        # bomb: tiny on disk, huge when every alias is expanded.
        other = offsets.setdefault(info.header_offset, name)
        if other != name:
            raise BadArchive(
                f"members '{other}' and '{name}' share the same data: possible zip bomb",
                where=label,
            )
        _check_ratio(info, label, limits)
        total += info.file_size
        if total > limits.max_total_size:
            raise BadArchive(
                f"members declare more than {limits.max_total_size} bytes in all:"
                " possible zip bomb",
                where=label,
                hint=RAISE_HINT.format("--max-size"),
            )
        mode = info.external_attr >> 16
        files[name] = SourceFile(name, info.file_size, bool(mode & 0o111))
    if len(dirs) + len(files) < len(infos):
        _raise_duplicate_dir(infos, label)
    check_collisions(label, files, dirs, hint=ZIP_COLLISION_HINT)
    if not files:
        raise BadArchive("the zip holds only folders, no files", where=label)
    return files


def _raise_duplicate_dir(infos: list[zipfile.ZipInfo], label: str) -> None:
    seen: set[str] = set()
    for info in infos:
        if info.orig_filename in seen:
            raise BadArchive(f"member '{info.orig_filename}' appears twice", where=label)
        seen.add(info.orig_filename)


def _check_name(info: zipfile.ZipInfo, label: str) -> None:
    name = info.orig_filename
    if not info.flag_bits & _FLAG_UTF8 and not name.isascii():
        # zipfile decodes unflagged names as cp437; encoding back gives the
        # exact bytes stored, which is what the user can recognise.
        shown = name.encode("cp437").decode("ascii", "backslashreplace")
        raise BadArchive(
            f"member name '{shown}' is not ASCII and the zip does not mark"
            " its names as UTF-8, so its encoding is unknown",
            where=label,
            hint="re-create the zip with UTF-8 names",
        )
    problem = path_problem(name)
    if problem:
        raise BadArchive(f"member '{printable(name)}' {problem}", where=label)


def _check_type(info: zipfile.ZipInfo, label: str) -> bool:
    """Return whether INFO is a folder; raise if it is neither file nor folder."""
    name = info.orig_filename
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise BadArchive(
            f"member '{name}' is a symbolic link; links are not allowed",
            where=label,
            hint="re-create the zip without links",
        )
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = _SPECIAL_TYPES.get(kind, f"of unknown file type {kind:#o}")
        raise BadArchive(
            f"member '{name}' is {what}, not a regular file or folder",
            where=label,
        )
    is_dir = name.endswith("/")
    if kind == stat.S_IFDIR and not is_dir:
        raise BadArchive(
            f"member '{name}' is marked as a folder but its name has no trailing slash",
            where=label,
        )
    if is_dir and info.file_size:
        raise BadArchive(f"folder entry '{name}' holds data", where=label)
    return is_dir


def _check_flags(info: zipfile.ZipInfo, label: str) -> None:
    name = info.orig_filename
    if info.flag_bits & (_FLAG_ENCRYPTED | _FLAG_STRONG_ENCRYPTION):
        raise BadArchive(
            f"member '{name}' is encrypted; encrypted zips are not supported",
            where=label,
            hint="re-create the zip without a password",
        )
    if info.flag_bits & _FLAG_PATCHED_DATA:
        raise BadArchive(
            f"member '{name}' uses compressed patched data, which is not supported",
            where=label,
            hint="re-create the zip with deflate",
        )
    if info.compress_type not in SUPPORTED_METHODS:
        known = ", ".join(SUPPORTED_METHODS.values())
        raise BadArchive(
            f"member '{name}' uses unsupported compression method"
            f" {info.compress_type} (supported: {known})",
            where=label,
            hint="re-create the zip with deflate",
        )


def _check_ratio(info: zipfile.ZipInfo, label: str, limits: Limits) -> None:
    if info.file_size < limits.ratio_min_size:
        return
    if info.file_size > limits.max_ratio * max(info.compress_size, 1):
        ratio = info.file_size // max(info.compress_size, 1)
        raise BadArchive(
            f"member '{info.orig_filename}' would expand {ratio} times"
            f" (limit {limits.max_ratio}): possible zip bomb",
            where=label,
            hint=RAISE_HINT.format("--max-ratio"),
        )


def inside_context(
    files: dict[str, SourceFile],
    infos: list[zipfile.ZipInfo],
    prefix: str,
    label: str,
) -> dict[str, tuple[SourceFile, zipfile.ZipInfo]]:
    """Return the context's files keyed by context-relative path."""
    above = set(parents(prefix + "x"))
    by_name = {info.orig_filename: info for info in infos}
    for info in infos:
        name = info.orig_filename
        if name.startswith(prefix) or name.rstrip("/") in above:
            continue
        raise BadArchive(
            f"member '{name}' lies outside the build context '{prefix}'"
            " (the folder holding the Dockerfile)",
            where=label,
            hint="keep one build context per zip",
        )
    members: dict[str, tuple[SourceFile, zipfile.ZipInfo]] = {}
    for name, entry in files.items():
        rel = name[len(prefix) :]
        members[rel] = (SourceFile(rel, entry.size, entry.executable), by_name[name])
    return members
