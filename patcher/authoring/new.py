"""Start a new patch: render ``ID.toml`` from the ``new-patch`` template and list it, inactive, in ``series``."""

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
from .series_file import Series, inactive_line, open_series, write_series

TEMPLATE = "new-patch/patch.toml.j2"
ID_FORMAT = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class NewPatch:
    """What ``patcher new`` wrote: the patch file, and where its inactive line sits in the series."""

    path: Path
    series: Path
    position: int  # 1-based, among the patches of the series once it is activated
    after: str | None  # the patch it follows, None when it is first
    line: int  # its line in the series, 1-based

    @property
    def patch_id(self) -> str:
        """The new patch's id."""
        return self.path.stem


def nearest_patches_dir(start: Path) -> Path | None:
    """Find the patch set above ``start``, as git finds ``.git``: the nearest ``patches/`` holding ``series``.

    ``start`` itself counts, and so does a ``patches/`` folder ``start`` is
    inside (``series`` beside it). None when no folder up to the root has one.
    """
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if folder.name == "patches" and os.path.lexists(folder / SERIES):
            return folder
        if os.path.lexists(folder / "patches" / SERIES):
            return folder / "patches"
    return None


def patches_dir_for_new(given: Path | None, cwd: Path | None = None) -> Path:
    """Return where ``patcher new`` writes: ``--patches``, else the nearest patch set above the current folder.

    Never the set installed with patcher: a new patch belongs to the
    author's own checkout, so none found is refused with what to do.
    """
    if given is not None:
        return given
    here = cwd or Path.cwd()
    found = nearest_patches_dir(here)
    if found is None:
        raise PatcherError("no patch set here: no 'patches' folder with a 'series' file in this folder or any "
                           "folder above it", where=str(here),
                           hint="pass --patches DIR, or run from inside a checkout of the patch set")
    return found


def new_patch(directory: Path, patch_id: str, *, target: str, scope: str, after: str | None = None,
              today: datetime.date | None = None) -> NewPatch:
    """Render ``ID.toml`` from the new-patch template and add it to the series as an inactive patch.

    Nothing is written unless the file renders, loads as a patch, and both
    files can be written; an existing or malformed id is refused.
    """
    check_id(patch_id)
    _check_target(target)
    _check_scope(scope)
    folder, series = open_series(directory)
    _check_new(directory, series, patch_id, after)
    text = _render(folder, patch_id, target, scope, today or datetime.date.today())
    return add_inactive_patch(directory, patch_id, text, after)


def add_inactive_patch(folder: Path, patch_id: str, toml_text: str, after: str | None = None) -> NewPatch:
    """Write ``folder/ID.toml`` and list it in ``folder/series`` as an inactive patch; the one way a patch is added.

    ``toml_text`` is the whole patch file; it must load as the loader will
    load it (its ``id`` is ``patch_id``). The series gains the line
    ``# ID.toml  # inactive until 'patcher test --activate ID' passes`` at
    the end, or right after the line of patch ``after`` (active or
    inactive): every command reads it as a comment, so ``apply`` leaves the
    patch out until ``patcher test --activate ID`` has run its cases.

    The series is rewritten in one step with its mode and line endings kept
    (``series_file.write_series``); the patch file is created exclusively,
    and removed again if the series cannot be written. Refused (exit 2,
    nothing written): a malformed or existing id, a folder without
    ``series``, an unknown ``after``, text that does not load.
    """
    check_id(patch_id)
    patch_folder, series = open_series(folder)
    _check_new(folder, series, patch_id, after)
    name = f"{patch_id}.toml"
    path = folder / name
    _check_loads(patch_folder, name, toml_text)
    index = _insertion_index(series, after)
    newline = series.newline  # keep the file's line endings
    texts = [line.text for line in series.lines]
    if index and not series.lines[index - 1].newline:
        texts[index - 1] += newline  # a last line without its line ending gets one, not our line glued on
    texts.insert(index, inactive_line(name, patch_id) + newline)
    _write(path, series.path, toml_text, "".join(texts))
    earlier = [line for line in series.listed if line.number <= index]
    return NewPatch(path, series.path, sum(1 for line in earlier if line.active) + 1,
                    earlier[-1].patch_id if earlier else None, index + 1)


def _check_new(directory: Path, series: Series, patch_id: str, after: str | None) -> None:
    """Refuse an id the folder or the series already has, and an ``after`` the series does not list."""
    path = directory / f"{patch_id}.toml"
    if os.path.lexists(path) or series.find(patch_id) is not None:
        raise PatcherError(f"patch '{patch_id}' already exists", where=str(path),
                           hint="choose another id, or edit the existing patch")
    _insertion_index(series, after)


def check_id(patch_id: str) -> None:
    """Refuse an id the loader would not accept: too long, or not lower-case words joined by '-'."""
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


def _insertion_index(series: Series, after: str | None) -> int:
    """Return the index in ``series.lines`` where the new line goes: the end, or right after ``after``'s line."""
    if after is None:
        return len(series.lines)
    line = series.find(after)
    if line is not None:
        return line.number
    known = ", ".join(i for i in (line.patch_id for line in series.listed) if i) or "none"
    raise PatcherError(f"--after {after}: no such patch in the series", where=str(series.path),
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
        write_series(series, series_text)
    except BaseException:
        path.unlink()
        raise
