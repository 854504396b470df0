"""Start a new patch: render ``ID.toml`` from the ``new-patch`` template and add it to ``series``."""

from __future__ import annotations

import datetime
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import PatcherError, PatchSetError
from ..patchset.folder import PatchFolder, shown
from ..patchset.load import MAX_ID_LENGTH, SERIES, LazyEnvironment, build_patch, read_patch_file, templates_digest
from ..patchset.templates import TemplateFailure, make_environment, render
from ..resources import templates_dir_for, tool_templates_dir

TEMPLATE = "new-patch/patch.toml.j2"
ID_FORMAT = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class NewPatch:
    """What ``patcher new`` wrote: the patch file, and where it sits in the series."""

    path: Path
    series: Path
    position: int  # 1-based, among the patches of the series
    after: str | None  # the patch it follows, None when it is first


def new_patch(directory: Path, patch_id: str, *, target: str, scope: str, after: str | None = None,
              today: datetime.date | None = None) -> NewPatch:
    """Write ``directory/ID.toml`` and list it in ``series`` (at the end, or right after ``after``).

    Nothing is written unless the file renders, loads as a patch, and both
    files can be written; an existing or malformed id is refused.
    """
    _check_id(patch_id)
    _check_target(target)
    _check_scope(scope)
    series = directory / SERIES
    if not directory.is_dir():
        raise PatcherError("no such patch set folder", where=str(directory),
                           hint="give --patches the folder holding 'series'")
    if not os.path.lexists(series):
        raise PatcherError("no 'series' file listing the patches in order", where=str(directory),
                           hint="is this a patch set folder? create an empty 'series' file to start one")
    path = directory / f"{patch_id}.toml"
    # The set is read as every command reads it: a series that is a link
    # leading out of the folder, a FIFO or a huge file is refused.
    folder = PatchFolder.open(directory, templates_dir_for(directory))
    try:
        lines = folder.read(series, what="series file").decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        raise PatchSetError("not UTF-8 text", where=str(series)) from None
    listed = _listed(lines)
    if os.path.lexists(path) or patch_id in listed.values():
        raise PatcherError(f"patch '{patch_id}' already exists", where=str(path),
                           hint="choose another id, or edit the existing patch")
    index = _insertion_index(lines, listed, after, series)
    text = _render(folder, patch_id, target, scope, today or datetime.date.today())
    _check_loads(folder, path.name, text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"  # keep the file's line endings
    new_lines = [*lines[:index], path.name + newline, *lines[index:]]
    if index and not new_lines[index - 1].endswith("\n"):
        new_lines[index - 1] += newline
    _write(path, series, text, "".join(new_lines))
    earlier = [listed_id for line, listed_id in sorted(listed.items()) if line < index]
    return NewPatch(path, series, len(earlier) + 1, earlier[-1] if earlier else None)


def _check_id(patch_id: str) -> None:
    if len(patch_id) > MAX_ID_LENGTH:
        raise PatcherError(f"'{shown(patch_id)}' is not a patch id: {len(patch_id)} characters, more than "
                           f"{MAX_ID_LENGTH}", hint="choose a shorter id, e.g. 'decode-fast-path'")
    if not ID_FORMAT.fullmatch(patch_id):
        raise PatcherError(f"'{shown(patch_id)}' is not a patch id",
                           hint="use lower-case words joined by '-', starting with a letter, e.g. 'decode-fast-path'")


def _check_target(target: str) -> None:
    path = PurePosixPath(target)
    if (not target or "\\" in target or path.is_absolute() or ".." in path.parts or path.suffix != ".py"
            or any(ord(c) < 32 or c in "\"'" for c in target)):
        raise PatcherError(f"--target '{target}' is not a relative path to a .py file",
                           hint="give the path the image runs the file at, e.g. vllm/attention/ops/paged_attn.py")


def _check_scope(scope: str) -> None:
    if not scope or not all(IDENTIFIER.fullmatch(part) for part in scope.split(".")):
        raise PatcherError(f"--scope '{scope}' is not a qualified name",
                           hint="name the class and function the patch rewrites, e.g. PagedAttention.forward_decode")


def _listed(lines: list[str]) -> dict[int, str]:
    """Map the line index of each patch the series names to its id."""
    listed = {}
    for index, line in enumerate(lines):
        name = line.split("#", 1)[0].strip()
        if name:
            listed[index] = PurePosixPath(name).stem.replace("_", "-")
    return listed


def _insertion_index(lines: list[str], listed: dict[int, str], after: str | None, series: Path) -> int:
    if after is None:
        return len(lines)
    for index, patch_id in listed.items():
        if patch_id == after:
            return index + 1
    known = ", ".join(listed.values()) or "none"
    raise PatcherError(f"--after {after}: no such patch in the series", where=str(series),
                       hint=f"the series has: {known}")


def _render(folder: PatchFolder, patch_id: str, target: str, scope: str, today: datetime.date) -> str:
    # A patch set may bring its own new-patch template; the tool's is the
    # fallback. The set's copy is untrusted: it renders in the sandbox, read
    # through the closed-world reader.
    own, bundled = templates_dir_for(folder.directory), tool_templates_dir()
    has_own = os.path.lexists(own / TEMPLATE)
    if not has_own and not (bundled / TEMPLATE).is_file():
        # Neither copy exists: the installation lost its file; pointing at the set's copy would lead nowhere.
        raise PatcherError(f"patcher's own template {TEMPLATE} is missing", where=str(bundled),
                           hint=f"the installation is incomplete: reinstall patcher, or give this patch set its "
                                f"own template at {own / TEMPLATE}")
    env = make_environment(folder, bundled)
    values = {"id": patch_id, "target": target, "scope": scope, "parts": scope.split("."),
              "today": today.isoformat()}
    try:
        return render(env, name=TEMPLATE, values=values)
    except TemplateFailure as error:
        hint = (f"fix {own / TEMPLATE}, or remove it to use the one installed with patcher"
                if has_own else "the installation is damaged: reinstall patcher")
        said = str(error) if TEMPLATE in str(error) else f"{error} ({TEMPLATE})"
        raise PatcherError(said, hint=hint) from None


def _check_loads(folder: PatchFolder, name: str, text: str) -> None:
    """Load the rendered file the way the series loader will, before anything is written."""
    with tempfile.TemporaryDirectory(prefix="patcher-new-") as scratch:
        path = Path(scratch) / name
        path.write_text(text, encoding="utf-8")
        try:
            _, data = read_patch_file(path)
            digest = templates_digest(folder.templates) if folder.templates is not None else ""
            build_patch(path, data, LazyEnvironment(folder), {}, digest).code.built
        except PatchSetError as error:
            raise PatcherError(f"the template {TEMPLATE} gives a patch that does not load: {error.message}",
                               hint="fix the template") from None


def _write(path: Path, series: Path, text: str, series_text: str) -> None:
    """Create the patch file, then replace ``series`` in one step; undo the first if the second fails."""
    try:
        with open(path, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except FileExistsError:
        raise PatcherError("already exists", where=str(path), hint="choose another id") from None
    except OSError as error:
        raise PatcherError(f"cannot write: {error.strerror}", where=str(path)) from None
    try:
        handle_fd, scratch = tempfile.mkstemp(dir=series.parent, prefix=".series-")
        try:
            with os.fdopen(handle_fd, "w", encoding="utf-8", newline="") as out:
                out.write(series_text)
            os.chmod(scratch, series.stat().st_mode & 0o7777)
            os.replace(scratch, series)
        except BaseException:
            os.unlink(scratch)
            raise
    except BaseException as error:
        path.unlink()
        if isinstance(error, OSError):
            raise PatcherError(f"cannot write: {error.strerror}", where=str(series)) from None
        raise
