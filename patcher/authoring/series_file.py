"""The ``series`` file as an author edits it: active and inactive entries, rewritten in place with its mode kept.

A patch that ``patcher new`` starts is listed commented out, with a note:

    # decode-fast-path.toml  # inactive until 'patcher test --activate decode-fast-path' passes

Every command that loads the series reads that line as a comment, so
``apply``, ``diff`` and the rest leave the patch out while it is being
written. ``patcher test ID`` runs an inactive patch's cases (``load_with``
puts it back in its place in the series for the run), and ``patcher test
--activate ID`` uncomments the line once every case passes (``activate``).
Any other comment line, a patch commented out by hand included, is left
alone: only the note marks a patch as inactive.

Every read goes through the closed-world reader (``PatchFolder``); every
write replaces the file in one step, keeping its mode and line endings
(``write_series``).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Sequence

from ..errors import PatcherError, PatchSetError
from ..patchset.folder import PatchFolder, decode, shown
from ..patchset.load import SERIES, LazyEnvironment, build_patch, parse_overrides, read_patch_file, templates_digest
from ..patchset.model import PatchSet
from ..resources import templates_dir_for

# '# NAME.toml  # inactive ...': the note is what makes a commented line an inactive patch.
INACTIVE_LINE = re.compile(r"#\s*(?P<name>[^\s#]+\.toml)\s*#\s*inactive\b")


def inactive_note(patch_id: str) -> str:
    """Say, as the series line's note, what makes the patch active."""
    return f"inactive until 'patcher test --activate {patch_id}' passes"


def inactive_line(name: str, patch_id: str) -> str:
    """Return the series line (without its line ending) that lists ``name`` as inactive."""
    return f"# {name}  # {inactive_note(patch_id)}"


@dataclass(frozen=True)
class SeriesLine:
    """One line of ``series``: the patch file it lists (active or inactive), or none."""

    number: int  # 1-based
    text: str  # as read, line ending included
    name: str | None = None  # the patch file it lists
    active: bool = False

    @property
    def patch_id(self) -> str | None:
        """The id of the patch it lists (its file name's stem), or None."""
        return None if self.name is None else PurePosixPath(self.name).stem.replace("_", "-")

    @property
    def newline(self) -> str:
        """The line's own ending ("" on a last line without one), whichever ``str.splitlines`` ended it at."""
        return self.text[len(self.text.splitlines()[0]):] if self.text else ""


@dataclass(frozen=True)
class Series:
    """The lines of a ``series`` file, as read through the patch folder."""

    path: Path
    lines: tuple[SeriesLine, ...]

    @property
    def listed(self) -> tuple[SeriesLine, ...]:
        """The lines that list a patch, active or inactive, in order."""
        return tuple(line for line in self.lines if line.name is not None)

    @property
    def inactive(self) -> tuple[str, ...]:
        """The ids of the inactive patches, in order."""
        return tuple(line.patch_id for line in self.listed if not line.active and line.patch_id)

    @property
    def newline(self) -> str:
        """The file's line ending: its first line's, LF for an empty file or one without any."""
        return "\r\n" if self.lines and self.lines[0].text.endswith("\r\n") else "\n"

    def find(self, patch_id: str) -> SeriesLine | None:
        """Return the line listing ``patch_id`` (active or inactive), or None."""
        return next((line for line in self.listed if line.patch_id == patch_id), None)

    def text(self) -> str:
        """Return the file's text, as read."""
        return "".join(line.text for line in self.lines)


def read_series(folder: PatchFolder) -> Series:
    """Read ``series`` through the closed-world reader and sort its lines into active, inactive and other."""
    path = folder.directory / SERIES
    text = decode(folder.read(path, what="series file"), path)
    lines = []
    # Lines as the loader counts them (str.splitlines), kept with their endings.
    for number, raw in enumerate(text.splitlines(keepends=True), 1):
        name = raw.partition("#")[0].strip()
        if name:
            lines.append(SeriesLine(number, raw, name, active=True))
            continue
        found = INACTIVE_LINE.match(raw.strip())
        lines.append(SeriesLine(number, raw, found.group("name") if found else None))
    return Series(path, tuple(lines))


def open_series(directory: Path) -> tuple[PatchFolder, Series]:
    """Open a patch set folder and read its series, refusing a missing folder or series with a hint."""
    if not directory.is_dir():
        raise PatcherError("no such patch set folder", where=str(directory),
                           hint="give --patches the folder holding 'series'")
    if not os.path.lexists(directory / SERIES):
        raise PatcherError("no 'series' file listing the patches in order", where=str(directory),
                           hint="is this a patch set folder? create an empty 'series' file to start one")
    folder = PatchFolder.open(directory, templates_dir_for(directory))
    return folder, read_series(folder)


def write_series(path: Path, text: str) -> None:
    """Replace the series file at ``path`` with ``text`` in one step, keeping its mode.

    The text goes to a temporary file beside it, given the file's mode
    before a byte is written, then renamed over it: a reader sees the old
    series or the new one, never a part, and never a mode ``mkstemp``
    chose (0600). A series that is a link inside the folder stays a link:
    the file it points to is the one replaced.
    """
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode & 0o7777
        handle, scratch = tempfile.mkstemp(dir=real.parent, prefix=".series-", suffix=".tmp")
    except OSError as error:
        raise PatcherError(f"cannot write: {error.strerror}", where=str(path)) from None
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, real)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        if isinstance(error, OSError):
            raise PatcherError(f"cannot write: {error.strerror}", where=str(path)) from None
        raise


def load_with(directory: Path, include: Sequence[str] = (), overrides: Sequence[str] = ()) -> PatchSet:
    """Load the series as ``load_patch_set`` does, with the inactive patches named in ``include`` in their places.

    Without an inactive patch to include this is ``load_patch_set``
    itself. Otherwise each file is read and built the same way (through
    the patch folder, with the same templates and ``--set`` checks), the
    inactive ones as though their lines were uncommented.
    """
    from ..patchset import load_patch_set

    folder, series = open_series(directory)
    wanted = set(include)
    lines = [line for line in series.listed if line.active or line.patch_id in wanted]
    if not any(not line.active for line in lines):
        if not any(line.active for line in series.listed) and series.inactive:
            first = series.inactive[0]
            raise PatchSetError(f"the series lists no active patch, only inactive ones ({', '.join(series.inactive)})",
                                where=str(series.path), hint=f"test one with 'patcher test {first}'")
        return load_patch_set(directory, overrides=overrides, templates=templates_dir_for(directory))
    paths = []
    for line in lines:
        assert line.name is not None
        path = folder.entry(line.name, series=series.path, line=line.number)
        if not os.path.exists(path):
            raise PatchSetError(f"line {line.number} names '{shown(line.name)}', which does not exist",
                                where=str(series.path))
        paths.append(path)
    raw = [read_patch_file(path, folder) for path in paths]
    ids = [data["id"] for _, data in raw]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PatchSetError(f"patch id '{duplicates[0]}' is used twice in the series", where=str(directory))
    values = parse_overrides(overrides, {data["id"]: (path, data) for path, data in raw})
    environment = LazyEnvironment(folder)
    shared = templates_digest(folder.templates or directory.parent / "templates")
    patches = tuple(build_patch(path, data, environment, values.get(data["id"], {}), shared) for path, data in raw)
    for patch in patches:
        patch.code.built  # noqa: B018 - builds it, raising what is wrong with it now
    return PatchSet(directory=directory, patches=patches)


def activate(directory: Path, patch_ids: Sequence[str]) -> dict[str, int]:
    """Uncomment the inactive lines of ``patch_ids`` in ``series``, in one write; return each one's position.

    A position counts the active patches, 1-based, once all are active.
    The series is read again just before it is rewritten, so a line
    another edit moved is still found; an id without an inactive line
    there is refused and nothing is written.
    """
    _, series = open_series(directory)
    wanted = {}
    for patch_id in patch_ids:
        line = series.find(patch_id)
        if line is None:
            raise PatcherError(f"cannot activate '{patch_id}': it is not in the series", where=str(series.path),
                               hint=f"list {patch_id}.toml in the series by hand")
        if line.active:
            # Listing it by hand, as for a missing line, would list it twice: the series would not load.
            others = [i for i in patch_ids if i != patch_id]
            raise PatcherError(f"cannot activate '{patch_id}': it is already active", where=str(series.path),
                               hint="another edit of the series listed it meanwhile: " + (
                                   f"activate the others with 'patcher test --activate {' '.join(others)}'"
                                   if others else "nothing left to activate"))
        wanted[line.number] = line
    texts = []
    for line in series.lines:
        chosen = wanted.get(line.number)
        texts.append(line.text if chosen is None or chosen.name is None else chosen.name + chosen.newline)
    write_series(series.path, "".join(texts))
    active = [line for line in series.listed if line.active or line.number in wanted]
    return {line.patch_id: position for position, line in enumerate(active, 1)
            if line.number in wanted and line.patch_id is not None}
