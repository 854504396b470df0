"""What ``apply`` changes, file by file or patch by patch, and why: the data behind ``patcher diff``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..manifest_file import MANIFEST
from ..patchset.model import Patch
from ..patchset.outcome import Status
from ..pipeline import Build
from ..report import ExitCode
from .series import replay
from .textdiff import FileChange


@dataclass(frozen=True)
class FileDiff:
    """One changed file and the patches that produced the change."""

    change: FileChange
    patches: tuple[Patch, ...]
    mirror_of: str | None = None  # the shipped copy this stale copy was made identical to

    @property
    def path(self) -> str:
        """The context path."""
        return self.change.path

    def unified(self) -> bytes:
        """The git-style diff of this file."""
        return self.change.unified()


@dataclass(frozen=True)
class Section:
    """A run of file diffs: the whole diff, or one patch's step of it."""

    files: tuple[FileDiff, ...]
    patch: Patch | None = None  # set in --per-patch sections
    status: str | None = None  # the patch's status in its step
    title: str | None = None  # for sections that are no patch (mirror sync)


@dataclass(frozen=True)
class BaseRef:
    """The revision ``--base`` compared with."""

    ref: str
    commit: str


@dataclass(frozen=True)
class DiffReport:
    """Everything ``patcher diff`` shows, in order."""

    input_name: str
    commit: str | None  # the patch set's commit, when in git
    sections: tuple[Section, ...]
    base: BaseRef | None = None
    per_patch: bool = False

    @property
    def files(self) -> tuple[FileDiff, ...]:
        """Every file diff of every section."""
        return tuple(f for s in self.sections for f in s.files)

    @property
    def empty(self) -> bool:
        """Whether there is nothing to show."""
        return not self.files

    def stat(self) -> tuple[int, int, int]:
        """Files changed, lines inserted, lines deleted: each file once, from its first content to its last.

        Under ``--per-patch`` a file changed by several patches is in several
        sections, each patch's change on top of the ones before; the total is
        the file's whole change (as ``diff --stat`` without ``--per-patch``
        says), not the sum of the steps, which counts a line again each time
        a later patch moves or rewrites the lines around it.
        """
        first: dict[str, FileChange] = {}
        last: dict[str, FileChange] = {}
        for item in self.files:
            first.setdefault(item.path, item.change)
            last[item.path] = item.change
        added = removed = 0
        for path, change in first.items():
            final = last[path]
            whole = change if final is change else FileChange(
                path, change.before, final.after, change.executable_before, final.executable_after)
            plus, minus = whole.counts()
            added += plus
            removed += minus
        return len(first), added, removed

    def exit_code(self, check: bool) -> ExitCode:
        """1 for a non-empty diff under ``--exit-code``, else 0."""
        return ExitCode.DIFFERENCE if check and not self.empty else ExitCode.OK


def apply_diff(build: Build, input_name: str) -> DiffReport:
    """The vendor tree against exactly what ``apply`` writes, the manifest aside."""
    return DiffReport(input_name, build.patch_set.commit, (Section(_changed_files(build)),))


def per_patch_diff(build: Build, input_name: str) -> DiffReport:
    """One section per patch in series order, then the mirror sync and other files; together they equal ``apply_diff``."""
    modes = _modes(build)
    sections = []
    for step in replay(build):
        files: tuple[FileDiff, ...] = ()
        if step.changed:
            change = FileChange(step.path, step.before, step.after, modes[step.path], modes[step.path])
            files = (FileDiff(change, (step.patch,)),)
        sections.append(Section(files, patch=step.patch, status=step.status.value))
    changed = _changed_files(build)
    mirrors = tuple(f for f in changed if f.mirror_of is not None)
    if mirrors:
        sections.append(Section(mirrors, title="mirrors: stale copies made identical to the patched shipped copies"))
    # What no patch wrote (.dockerignore gaining the manifest): without it the sections would not add up to apply.
    shipped = set(build.targets.values())
    others = tuple(f for f in changed if f.mirror_of is None and f.path not in shipped)
    if others:
        sections.append(Section(others, title=f"context: files apply changes beside the patches ({MANIFEST} kept "
                                              "out of the image)"))
    return DiffReport(input_name, build.patch_set.commit, tuple(sections), per_patch=True)


def base_diff(base: Build, head: Build, input_name: str, ref: BaseRef) -> DiffReport:
    """What ``apply`` writes with the patch set at ``ref`` against what it writes with the working tree's."""
    tree = head.tree
    modes = _modes(head)
    files = []
    mirrored = {m.path for m in (*base.mirrors, *head.mirrors)}
    for path in sorted(set(base.changes) | set(head.changes), key=lambda p: (p in mirrored, p)):
        if path == MANIFEST:
            continue
        original = None
        old = base.changes.get(path)
        new = head.changes.get(path)
        if (old is None or new is None) and tree.exists(path):
            original = tree.read(path)
        before = old if old is not None else original
        after = new if new is not None else original
        if before == after:
            continue
        why = _unique((*_producers(head, path), *_producers(base, path)))
        executable = modes.get(path, False)
        change = FileChange(path, before, after, executable, executable)
        files.append(FileDiff(change, why, _mirror_of(head, path) or _mirror_of(base, path)))
    return DiffReport(input_name, head.patch_set.commit, (Section(tuple(files)),), base=ref)


def _changed_files(build: Build) -> tuple[FileDiff, ...]:
    modes = _modes(build)
    files = []
    # The shipped copies first, then the stale copies made identical to them.
    for path in sorted(build.changes, key=lambda p: (_mirror_of(build, p) is not None, p)):
        if path == MANIFEST:
            continue  # the manifest records the run; it is no change to the vendor's code
        before = build.tree.read(path) if build.tree.exists(path) else None  # None: a file the run adds
        executable = modes.get(path, False)
        change = FileChange(path, before, build.changes[path], executable, executable)
        files.append(FileDiff(change, _producers(build, path), _mirror_of(build, path)))
    return tuple(files)


def _producers(build: Build, path: str) -> tuple[Patch, ...]:
    shipped = _mirror_of(build, path) or path
    return tuple(o.patch for f in build.files if f.path == shipped for o in f.outcomes if o.status is Status.APPLIED)


def _mirror_of(build: Build, path: str) -> str | None:
    return next((m.shipped for m in build.mirrors if m.path == path), None)


def _modes(build: Build) -> dict[str, bool]:
    return {item.path: item.executable for item in build.tree.files()}


def _unique(patches: Iterable[Patch]) -> tuple[Patch, ...]:
    seen: dict[str, Patch] = {}
    for patch in patches:
        seen.setdefault(patch.id, patch)
    return tuple(seen.values())
