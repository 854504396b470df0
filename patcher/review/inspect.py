"""What the Docker build really ships, and where a patched file could silently fail to land: ``patcher inspect``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..archive.tree import SourceTree
from ..errors import ShippingError
from ..manifest_file import MANIFEST
from ..patchset.model import SeriesOutline
from ..report import ExitCode
from ..shipping import Installed, ShipPlan, find_mirrors, plan_shipping
from ..shipping.install_script import Note
from ..shipping.plan import DOCKERFILE, describe, parent_folders


@dataclass(frozen=True)
class TargetShipping:
    """A file the patch set targets: which context file the image runs as it, and where that lands."""

    target: str
    patches: tuple[str, ...]
    shipped: str | None  # None when no single shipped copy was found
    image_paths: tuple[str, ...]
    mirrors: tuple[str, ...]
    problem: str | None = None
    unread: tuple[Note, ...] = ()  # commands not read that could change the shipped copy in the image

    def caveat(self) -> str | None:
        """One line saying that the answer depends on commands the reader did not read, if it does."""
        if not self.unread:
            return None
        verb = "was not read: it could" if len(self.unread) == 1 else "were not read: they could"
        return f"the image ships {self.shipped}, but {describe(self.unread)} {verb} change that"


@dataclass(frozen=True)
class HiddenFailure:
    """A copy of a patched file whose failure would not stop the image build."""

    path: str  # the patched context file
    image_path: str
    script: str
    line: int
    reasons: tuple[str, ...]  # "no 'set -e'", "'|| true'", "'2>/dev/null'", ...

    def message(self) -> str:
        """One line a reader can act on."""
        return (f"{self.script}:{self.line}: if copying the patched {self.path} to {self.image_path} fails, "
                f"the build goes on ({', '.join(self.reasons)}) and the image silently keeps the vendor's "
                "unpatched file; add 'set -e' at the top of the script and drop what hides the error")


@dataclass(frozen=True)
class Inspection:
    """Everything ``inspect`` reports about one tree."""

    label: str
    plan: ShipPlan
    files: tuple[str, ...]  # every file of the tree
    targets: tuple[TargetShipping, ...]
    warnings: tuple[HiddenFailure, ...]

    @property
    def unshipped(self) -> tuple[str, ...]:
        """Vendor files no COPY/ADD takes into the image (apply's own record is not one: see ``record``)."""
        return tuple(p for p in self.files if p not in self.plan.copied and p != self.record)

    @property
    def record(self) -> str | None:
        """The manifest an earlier ``apply`` left in the tree, when the build does not copy it; else None."""
        return MANIFEST if MANIFEST in self.files and MANIFEST not in self.plan.copied else None

    def exit_code(self, strict: bool) -> ExitCode:
        """1 under ``--strict`` when there is a warning, a target that does not ship, or one that unread lines could change."""
        trouble = self.warnings or any(t.problem or t.unread for t in self.targets)
        return ExitCode.DIFFERENCE if strict and trouble else ExitCode.OK


def inspect_tree(tree: SourceTree, patch_set: SeriesOutline, stage: str | None = None) -> Inspection:
    """Follow the Dockerfile and its install scripts, and match them with the patch set's targets.

    ``stage`` names the build stage that is the image (``docker build --target``); default the last.
    """
    plan = plan_shipping(tree, stage)
    targets = []
    warnings: list[HiddenFailure] = []
    for target in patch_set.targets:
        ids = patch_set.ids_for(target)
        found = plan.find(target)
        image_paths = tuple(dict.fromkeys(i.image_path for i in found))
        try:
            shipped = plan.shipped_copy(target)
        except ShippingError as error:
            targets.append(TargetShipping(target, ids, None, image_paths, (), error.message))
            continue
        mirrors = find_mirrors(tree, shipped).mirrors
        unread = plan.caveats(shipped, tuple(i.image_path for i in found if i.path == shipped))
        targets.append(TargetShipping(target, ids, shipped, image_paths, mirrors, None, unread))
        warnings.extend(_hidden(i) for i in found if i.path == shipped and _hides(i))
    return Inspection(tree.label, plan, tuple(f.path for f in tree.files()), tuple(targets), tuple(dict.fromkeys(warnings)))


QUIET = ("2>/dev/null", "&>/dev/null", ">/dev/null 2>&1")  # they hide the message, not the failure


def _hides(item: Installed) -> bool:
    # Without set -e every failure is ignored; with it, '||', '&&' lists, pipes and a caller that goes on hide one.
    return not item.stops_on_error or any(h not in QUIET for h in item.hides_failure)


def _hidden(item: Installed) -> HiddenFailure:
    reasons = (["no 'set -e'"] if not item.stops_on_error else []) + [f"'{h}'" for h in item.hides_failure]
    return HiddenFailure(item.path, item.image_path, item.script, item.line, tuple(reasons))


def lines(inspection: Inspection) -> list[str]:
    """The human report, for stdout."""
    plan = inspection.plan
    dockerfile = plan.dockerfile
    out = [f"{inspection.label}: {len(inspection.files)} files, {len(plan.copied)} shipped", "", DOCKERFILE]
    events: list[tuple[int, str]] = [(w.line, f"WORKDIR {w.path}") for w in dockerfile.workdirs]
    if len(dockerfile.stages) > 1:
        shipping = dockerfile.shipping_stages()
        for stage in dockerfile.stages:
            role = ("the image" if stage.index == dockerfile.final else
                    "used by the image" if stage.index in shipping else "not in the image")
            name = f" AS {stage.name}" if stage.name else ""
            events.append((stage.line, f"FROM {stage.base}{name} (stage {stage.index}: {role})"))
    for copy in dockerfile.copies:
        count = plan.copy_counts.get(copy.line, 0)
        flags = "".join(f" {f}" for f in copy.flags)
        out_sources = " ".join(copy.sources)
        events.append((copy.line, f"{copy.instruction}{flags} {out_sources} -> {copy.destination} "
                                  f"({count} file{'s' if count != 1 else ''})"))
    for run in dockerfile.runs:
        events.append((run.line, f"RUN {run.script} (in {run.cwd})"))
    out.extend(f"  {line:>4}  {text}" for line, text in sorted(events))
    if plan.ignored:
        out.append(f"  .dockerignore keeps {len(plan.ignored)} file(s) out of the build context")
    out += ["", "Install scripts"]
    if not plan.scripts:
        out.append("  (none: the Dockerfile runs no script from the context)")
    for script in plan.scripts:
        errexit = "set -e" if script.body.stops_on_error else "no 'set -e': a failed command does not stop the build"
        out.append(f"  {script.path} (Dockerfile line {script.run_line}; {errexit})")
        for item in (i for i in plan.installed if i.script == script.path):
            out.append(_installed_line(item))
        if script.body.unknown:
            out.append(f"        unresolved variables: {', '.join('$' + v for v in script.body.unknown)}")
    run_lines = [i for i in plan.installed if i.script == DOCKERFILE]
    if run_lines:
        out.append("  the Dockerfile's own RUN lines")
        out.extend(_installed_line(item) for item in run_lines)
    for title, kinds in (("Not read", ("unread", "stop", "program")), ("Would fail", ("fails",)),
                         ("Assumed", ("assumed",))):
        notes = [n for n in plan.notes if n.kind in kinds]
        if notes:
            out += ["", f"{title} ({len(notes)})"]
            for note in notes:
                where = f" [{note.stage}]" if len(dockerfile.stages) > 1 else ""
                out.append(f"  {note.file}:{note.line}{where}  {note.text}")
                out.append(f"        {note.reason}")
    out += ["", "Patch targets"]
    for target in inspection.targets:
        if target.shipped is None:
            out.append(f"  {target.target}: NOT SHIPPED: {target.problem}")
        else:
            out.append(f"  {target.target} <- {target.shipped}")
            out.extend(f"        -> {image}" for image in target.image_paths)
            if target.mirrors:
                out.append(f"        stale copies synced by apply: {', '.join(target.mirrors)}")
            if target.unread:
                out.append(f"        could be changed by what was not read: {describe(target.unread)}")
        out.append(f"        patches: {', '.join(target.patches)}")
    out += ["", f"Shipped files ({len(plan.copied)})"]
    for path, image in sorted(plan.copied.items()):
        installed = [i.image_path for i in plan.installed if i.path == path and i.image_path != image]
        out.append(f"  {path} -> {', '.join([image, *installed])}")
    out += ["", f"Never shipped ({len(inspection.unshipped)} files)"]
    out.extend(f"  {entry}" for entry in _collapse(inspection.unshipped, set(plan.copied)))
    if inspection.record:
        out += ["", f"Apply's record (not a vendor file, not shipped): {inspection.record}"]
    return out


def _installed_line(item: Installed) -> str:
    hides = f"  [{', '.join(item.hides_failure)}]" if item.hides_failure else ""
    return f"  {item.line:>4}  {item.path} -> {item.image_path}{hides}"


def _collapse(unshipped: tuple[str, ...], shipped: set[str]) -> list[str]:
    """List paths, folding the files of a folder that ships nothing into ``folder/ (N files)``."""
    busy = {folder for path in shipped for folder in parent_folders(path)}
    groups: dict[str, list[str]] = {}
    for path in unshipped:
        key = next((folder + "/" for folder in parent_folders(path) if folder not in busy), path)
        groups.setdefault(key, []).append(path)
    return [f"{key} ({len(paths)} files)" if len(paths) > 1 else paths[0] for key, paths in groups.items()]


def to_json(inspection: Inspection) -> dict[str, Any]:
    """The inspection as plain data."""
    plan = inspection.plan
    return {
        "input": inspection.label,
        "dockerfile": {
            "workdirs": [{"line": w.line, "path": w.path} for w in plan.dockerfile.workdirs],
            "copies": [{"line": c.line, "instruction": c.instruction, "flags": list(c.flags),
                        "sources": list(c.sources), "destination": c.destination} for c in plan.dockerfile.copies],
            "runs": [{"line": r.line, "script": r.script, "cwd": r.cwd} for r in plan.dockerfile.runs],
        },
        "scripts": [
            {"path": s.path, "image_path": s.image_path, "run_line": s.run_line,
             "stops_on_error": s.body.stops_on_error, "unresolved_variables": list(s.body.unknown)}
            for s in plan.scripts
        ],
        "stages": [
            {"index": st.index, "name": st.name, "base": st.base, "line": st.line, "from_stage": st.parent,
             "uses": list(st.uses), "is_image": st.index == plan.dockerfile.final,
             "in_image": st.index in plan.dockerfile.shipping_stages()}
            for st in plan.dockerfile.stages
        ],
        "shipped": [
            {"path": path, "image_paths": [image, *(i.image_path for i in plan.installed
                                                    if i.path == path and i.image_path != image)]}
            for path, image in sorted(plan.copied.items())
        ],
        "image": [{"image_path": image, "path": placed.source} for image, placed in sorted(plan.image.items())],
        "installed": [
            {"path": i.path, "image_path": i.image_path, "script": i.script, "line": i.line,
             "hides_failure": list(i.hides_failure), "stops_on_error": i.stops_on_error}
            for i in plan.installed
        ],
        "targets": [
            {"target": t.target, "patches": list(t.patches), "shipped": t.shipped, "image_paths": list(t.image_paths),
             "mirrors": list(t.mirrors), "problem": t.problem, "unread": [note_json(n) for n in t.unread]}
            for t in inspection.targets
        ],
        "unread": [note_json(n) for n in plan.notes if n.kind in ("unread", "stop", "program")],
        "fails": [note_json(n) for n in plan.notes if n.kind == "fails"],
        "assumed": [note_json(n) for n in plan.notes if n.kind == "assumed"],
        "never_shipped": list(inspection.unshipped),
        "record": inspection.record,
        "dockerignored": list(plan.ignored),
        "warnings": [
            {"path": w.path, "image_path": w.image_path, "script": w.script, "line": w.line,
             "reasons": list(w.reasons), "message": w.message()}
            for w in inspection.warnings
        ],
    }


def note_json(note: Note) -> dict[str, Any]:
    """A note as plain data: where, what was written, why it was not read, what it could change."""
    return {"file": note.file, "line": note.line, "text": note.text, "kind": note.kind, "reason": note.reason,
            "stage": note.stage, "could_change": None if note.scope is None else list(note.scope)}
