"""Read a patch set folder as a closed world: every file it names stays inside it, and only regular files are read.

A patch folder is untrusted input: CI runs patcher on pull requests that
change ``patches/``. Whatever the folder names (a series entry, a patch
file, a template and what it includes, ``policy.toml``) is read through this
module, which:

- resolves symlinks first, then refuses a path that lands outside the patch
  folder (or, for templates, outside the templates folder): ``../x.toml``,
  an absolute path, a symlink pointing out, a templates folder that is a
  symlink pointing out;
- reads regular files only: a FIFO, a device or a socket is refused from its
  ``lstat``, before anything opens it, and the file is then opened with
  ``O_NONBLOCK | O_NOFOLLOW`` and checked again with ``fstat`` (a swap
  between the two is refused too), so nothing ever blocks on a FIFO;
- caps every file at ``MAX_FILE_BYTES`` and reads at most one byte more, so
  ``/dev/zero`` or a huge file cannot eat memory;
- refuses TOML nested deeper than ``MAX_NESTING`` (brackets, inline tables
  and dotted keys), with the line, before ``tomllib`` sees it: ``tomllib``
  recurses once per bracket (RecursionError past about 1,000) and its cost
  grows with the square of a dotted key's length.

Every refusal is a ``PatchSetError`` (exit 2): one line naming the file or
the series entry.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the image-side tool may run on 3.10
    import tomli as tomllib

from ..errors import PatchSetError

# The committed patch files are under 10 KB, the templates under 1 KB: a
# mebibyte leaves room for any real patch and bounds what a hostile one costs.
MAX_FILE_BYTES = 1 << 20
# Everything one load reads from a patch set (series, patch files,
# templates): compiling a mebibyte of template takes seconds, so the total
# is what bounds the time a hostile set costs. A real set is under 100 KB.
MAX_SET_BYTES = 16 << 20
# Whole templates folder, as the patch cache's digest reads every file of it.
MAX_TEMPLATE_FILES = 10_000
MAX_TEMPLATES_BYTES = 16 << 20
# Nesting of TOML values and keys; a patch uses 3 (a [[steps]] table's
# reuse-buffers spec).
MAX_NESTING = 32
# A file name longer than this cannot exist on Linux, macOS or Windows.
MAX_NAME_BYTES = 255


class FileMissing(PatchSetError):
    """A file the patch folder names does not exist."""


def shown(text: str, limit: int = 80) -> str:
    """Return ``text`` fit for a one-line message: control characters escaped, long names cut."""
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _real(path: Path) -> Path:
    # realpath rather than Path.resolve: it never raises on a loop or a
    # missing file, and what it cannot resolve is then refused by the stat.
    return Path(os.path.realpath(path))


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "a file of a kind this system does not name"


def _os_problem(error: OSError) -> str:
    if error.errno == errno.ENAMETOOLONG:
        return f"its name is too long for the file system (at most {MAX_NAME_BYTES} bytes a name)"
    if error.errno == errno.ELOOP:
        return "a symlink loop"
    return (error.strerror or str(error)).lower()


def _check_name(path: Path) -> str | None:
    """Say what is wrong with a path's spelling before the OS is asked about it."""
    for part in path.parts:
        if "\0" in part:
            return "its name holds a NUL character"
        if len(os.fsencode(part)) > MAX_NAME_BYTES:
            return f"its name is too long for the file system ({len(os.fsencode(part))} bytes; at most {MAX_NAME_BYTES})"
    return None


def read_file(path: Path, *, roots: tuple[Path, ...], limit: int = MAX_FILE_BYTES, what: str = "file",
              within: str = "the patch folder") -> bytes:
    """Return the bytes of ``path``, a regular file inside one of ``roots`` (real paths) once symlinks are resolved.

    Raises ``PatchSetError`` naming ``path`` (``FileMissing`` when it is not
    there) when it leads outside, is not a regular file, or is over ``limit``.
    """
    where = str(path)
    problem = _check_name(path)
    if problem:
        raise PatchSetError(f"cannot read this {what}: {problem}", where=shown(where, 300))
    real = _real(path)
    if not _inside(real, roots):
        raise PatchSetError(f"this {what} leads outside {within} (it resolves to {shown(str(real), 200)})",
                            where=where, hint="a patch set reads only files inside its own folders")
    try:
        before = os.lstat(real)
    except FileNotFoundError:
        raise FileMissing(f"no such {what}", where=where) from None
    except OSError as error:
        raise PatchSetError(f"cannot read this {what}: {_os_problem(error)}", where=where) from None
    if not stat.S_ISREG(before.st_mode):
        # Checked before opening: opening a FIFO for reading blocks until a
        # writer comes, and opening some devices has effects of its own.
        raise PatchSetError(f"this {what} is {_kind(before.st_mode)}, not a regular file", where=where,
                            hint="a patch set is made of plain files")
    if before.st_size > limit:
        raise PatchSetError(f"this {what} is {before.st_size:,} bytes, more than the {limit:,} a patch set file may hold",
                            where=where)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(real, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink where lstat saw a regular file
            raise PatchSetError(f"this {what} changed while it was read", where=where, hint="run again") from None
        raise PatchSetError(f"cannot read this {what}: {_os_problem(error)}", where=where) from None
    try:
        after = os.fstat(handle)
        if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise PatchSetError(f"this {what} changed while it was read", where=where, hint="run again")
        chunks = []
        size = 0
        while size <= limit:  # one byte past the limit says it grew since the stat
            chunk = os.read(handle, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise PatchSetError(f"cannot read this {what}: {_os_problem(error)}", where=where) from None
    finally:
        os.close(handle)
    if size > limit:
        raise PatchSetError(f"this {what} is more than the {limit:,} bytes a patch set file may hold", where=where)
    return b"".join(chunks)


def decode(data: bytes, path: Path) -> str:
    """Decode a patch set file as UTF-8 (whatever the locale), naming it if it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchSetError("not UTF-8 text", where=str(path)) from None


@dataclass(frozen=True)
class PatchFolder:
    """A patch set folder and its templates folder, with the real paths reads must stay inside."""

    directory: Path  # as given, for messages
    root: Path  # its real path
    templates: Path | None = None  # as given
    templates_root: Path | None = None  # its real path; None when there is no templates folder
    spent: list[int] = field(default_factory=lambda: [0], compare=False, repr=False)  # bytes read so far

    def _spend(self, data: bytes, path: Path) -> bytes:
        self.spent[0] += len(data)
        if self.spent[0] > MAX_SET_BYTES:
            raise PatchSetError(f"the patch set holds more than the {MAX_SET_BYTES:,} bytes one load may read",
                                where=str(path))
        return data

    @classmethod
    def open(cls, directory: Path, templates: Path | None = None) -> PatchFolder:
        """Check where ``directory`` and ``templates`` lead; a templates folder may not be a symlink pointing out.

        ``directory`` is what the user named (``--patches``), so it is
        trusted wherever it leads. ``templates`` (``DIR/templates`` or the
        ``templates/`` folder beside DIR) must be a real folder where it
        sits, or a symlink into the patch folder.
        """
        root = _real(directory)
        if templates is None or not os.path.lexists(templates):
            return cls(directory, root, templates, None)
        real = _real(templates)
        where_it_sits = _real(templates.parent) / templates.name
        if not _inside(real, (root, where_it_sits)):
            raise PatchSetError(f"the templates folder leads outside the patch folder (it resolves to "
                                f"{shown(str(real), 200)})", where=str(templates),
                                hint="make templates/ a real folder; a patch set reads only its own files")
        if not real.is_dir():
            return cls(directory, root, templates, None)
        return cls(directory, root, templates, real)

    def read(self, path: Path, *, what: str = "file") -> bytes:
        """Read a file of the patch folder (a patch, the series, the policy)."""
        return self._spend(read_file(path, roots=(self.root,), what=what), path)

    def entry(self, name: str, *, series: Path, line: int) -> Path:
        """Return the path a series line names, refusing an absolute one and odd characters."""
        if os.path.isabs(name) or name.startswith(("/", "\\")):
            raise PatchSetError(f"line {line} names '{shown(name)}', an absolute path", where=str(series),
                                hint="name each patch file relative to the patch folder")
        if not name.isprintable():
            raise PatchSetError(f"line {line} names '{shown(name)}', which holds control characters",
                                where=str(series))
        problem = _check_name(Path(name))
        if problem:
            raise PatchSetError(f"line {line} names '{shown(name)}': {problem}", where=str(series))
        path = self.directory / name
        if not _inside(_real(path), (self.root,)):
            raise PatchSetError(f"line {line} names '{shown(name)}', which leads outside the patch folder "
                                f"(it resolves to {shown(str(_real(path)), 200)})", where=str(series),
                                hint="a series lists files inside its own folder")
        return path

    def template(self, pieces: list[str]) -> tuple[bytes, Path]:
        """Read the template at ``pieces`` (a name split on '/', without '..'), inside the templates folder."""
        if self.templates is None or self.templates_root is None:
            raise FileMissing("no templates folder")
        path = self.templates.joinpath(*pieces)
        data = read_file(path, roots=(self.templates_root,), what="template", within="the templates folder")
        return self._spend(data, path), path


def templates_digest(folder: Path) -> str:
    """Digest every file of a templates folder (names and bytes): what a patch's templates can read.

    Symlinks are followed only to where they lead inside the folder (a link
    to a folder is digested as the path it names, its files under their own
    names); anything else, or any file that is not regular, is refused, as
    rendering would refuse it. The walk is capped at ``MAX_TEMPLATE_FILES``
    files and ``MAX_TEMPLATES_BYTES`` bytes.
    """
    digest = hashlib.sha256()
    if not folder.is_dir():
        return digest.hexdigest()
    root = _real(folder)
    files = 0
    total = 0
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            raise PatchSetError(f"cannot list this folder: {_os_problem(error)}", where=str(directory)) from None
        for entry in entries:
            name = prefix + entry.name
            files += 1
            if files > MAX_TEMPLATE_FILES:
                raise PatchSetError(f"the templates folder holds more than {MAX_TEMPLATE_FILES:,} entries",
                                    where=str(folder))
            if entry.is_dir(follow_symlinks=False):
                pending.append((Path(entry.path), name + "/"))
                continue
            # Each entry: its name, NUL (never in a name), a kind byte and a
            # fixed-length digest, so no two folders feed the same bytes.
            path = Path(entry.path)
            if entry.is_symlink() and os.path.isdir(path):
                target = _real(path)
                if not _inside(target, (root,)):
                    raise PatchSetError(f"this template link leads outside the templates folder (it resolves to "
                                        f"{shown(str(target), 200)})", where=str(path))
                link = os.path.relpath(target, root).encode("utf-8", "surrogateescape")
                digest.update(name.encode("utf-8", "surrogateescape") + b"\0d" + hashlib.sha256(link).digest())
                continue
            data = read_file(path, roots=(root,), what="template", within="the templates folder")
            total += len(data)
            if total > MAX_TEMPLATES_BYTES:
                raise PatchSetError(f"the templates folder holds more than {MAX_TEMPLATES_BYTES:,} bytes",
                                    where=str(folder))
            digest.update(name.encode("utf-8", "surrogateescape") + b"\0f" + hashlib.sha256(data).digest())
    return digest.hexdigest()


# --------------------------------------------------------------------------- TOML

# What can open or close a nesting level, a string or a comment, or end a key.
_SIGNIFICANT = re.compile(r"[\"'#\[\]{},=.\n]")
_BASIC_REST = re.compile(r'(?:[^"\\\n]|\\.)*"')
_MULTILINE_BASIC_REST = re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL)


def _string_end(text: str, start: int) -> int:
    """Return where the string opening at ``start`` ends (past its closing quotes), or -1 if it does not."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        if quote == '"':
            found = _MULTILINE_BASIC_REST.match(text, start + 3)
            end = found.end() if found else -1
        else:
            end = text.find("'''", start + 3)
            end = end + 3 if end >= 0 else -1
        while 0 <= end < len(text) and text[end] == quote and text.startswith(quote * 3, end - 2):
            end += 1  # up to two quotes may end the content: """a"""""
        return end
    if quote == '"':
        found = _BASIC_REST.match(text, start + 1)
        return found.end() if found else -1
    end = text.find("'", start + 1)
    newline = text.find("\n", start + 1)
    return -1 if end < 0 or 0 <= newline < end else end + 1


def nesting_problem(text: str, limit: int = MAX_NESTING) -> tuple[int, int] | None:
    """Return (line, depth) where ``text`` first nests deeper than ``limit``, counting brackets and dotted keys.

    A lexical scan (strings and comments skipped), so that a hostile file is
    refused before ``tomllib`` parses it. Malformed TOML is left to
    ``tomllib`` to report.
    """
    stack: list[str] = []  # "[" (array) or "{" (inline table)
    in_key = True  # at a key: the start of a top-level line, or after "{" or "," in an inline table
    dots = 0  # dots in the key so far
    header = False  # inside a top-level [table] or [[array of tables]] header
    line = 1
    position = 0
    while True:
        found = _SIGNIFICANT.search(text, position)
        if found is None:
            return None
        char, at = found.group(), found.start()
        position = at + 1
        if char == "\n":
            line += 1
            if not stack:
                in_key, dots, header = True, 0, False
        elif char == "#":
            end = text.find("\n", at)
            position = len(text) if end < 0 else end
        elif char in "\"'":
            end = _string_end(text, at)
            if end < 0:
                return None  # unterminated: tomllib says where
            line += text.count("\n", at, end)
            position = end
        elif char == "=":
            if in_key and not header:
                in_key, dots = False, 0
        elif char == ".":
            if in_key or header:
                dots += 1
        elif char == "[":
            if not stack and in_key:
                header = True  # the second "[" of "[[" is met here again: still a header
                continue
            stack.append("[")
            in_key = False
        elif char == "]":
            if header:
                in_key = False
            elif stack and stack[-1] == "[":
                stack.pop()
        elif char == "{":
            stack.append("{")
            in_key, dots = True, 0
        elif char == "}":
            if stack and stack[-1] == "{":
                stack.pop()
            in_key, dots = False, 0
        elif char == ",":
            if stack and stack[-1] == "{":
                in_key, dots = True, 0
        depth = len(stack) + dots + (1 if header else 0)
        if depth > limit:
            return line, depth


def _deepest(data: Any, limit: int) -> bool:
    """Say whether parsed TOML nests deeper than ``limit`` (a walk without recursion)."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        value, depth = pending.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
    return False


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """Parse TOML text from a patch set file, refusing what would make ``tomllib`` recurse or crawl."""
    deep = nesting_problem(text)
    if deep is not None:
        line, depth = deep
        raise PatchSetError(f"line {line}: values or keys nest more than {MAX_NESTING} levels deep",
                            where=str(path), hint="a patch needs a few levels; flatten the tables")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PatchSetError(f"not valid TOML: {error}", where=str(path)) from None
    except RecursionError:
        raise PatchSetError(f"values nest more than {MAX_NESTING} levels deep", where=str(path)) from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise PatchSetError(f"not valid TOML: {shown(str(error), 120)}", where=str(path)) from None
    if _deepest(data, MAX_NESTING):
        raise PatchSetError(f"values or keys nest more than {MAX_NESTING} levels deep", where=str(path))
    return data


def read_toml(path: Path, *, roots: tuple[Path, ...], what: str = "file") -> dict[str, Any]:
    """Read and parse a TOML file of a patch set, inside ``roots``."""
    return parse_toml(decode(read_file(path, roots=roots, what=what), path), path)


__all__ = ["MAX_FILE_BYTES", "MAX_NESTING", "FileMissing", "PatchFolder", "decode", "parse_toml", "read_file",
           "read_toml", "shown", "templates_digest"]
