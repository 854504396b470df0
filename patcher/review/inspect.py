"""What the Docker build really ships, and where a patched file could silently fail to land: ``patcher inspect``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..archive.tree import SourceTree
from ..errors import ShippingError
from ..patchset.model import SeriesOutline
from ..report import ExitCode
from ..shipping import Installed, ShipPlan, find_mirrors, plan_shipping
from ..shipping.plan import DOCKERFILE, parent_folders


@dataclass(frozen=True)
class TargetShipping:
    """A file the patch set targets: which context file the image runs as it, and where that lands."""

    target: str
    patches: tuple[str, ...]
    shipped: str | None  # None when no single shipped copy was found
    image_paths: tuple[str, ...]
    mirrors: tuple[str, ...]
    problem: str | None = None


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
        """Tree files no COPY/ADD takes into the image."""
        return tuple(p for p in self.files if p not in self.plan.copied)

    def exit_code(self, strict: bool) -> ExitCode:
        """1 under ``--strict`` when there is a warning or a target that does not ship, else 0."""
        trouble = self.warnings or any(t.problem for t in self.targets)
        return ExitCode.DIFFERENCE if strict and trouble else ExitCode.OK


def inspect_tree(tree: SourceTree, patch_set: SeriesOutline) -> Inspection:
    """Follow the Dockerfile and its install scripts, and match them with the patch set's targets."""
    plan = plan_shipping(tree)
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
        targets.append(TargetShipping(target, ids, shipped, image_paths, mirrors))
        warnings.extend(_hidden(i) for i in found if i.path == shipped and _hides(i))
    return Inspection(tree.label, plan, tuple(f.path for f in tree.files()), tuple(targets), tuple(dict.fromkeys(warnings)))


def _hides(item: Installed) -> bool:
    # Without set -e every failure is ignored; with it, only '||', '&&' lists and pipes hide one.
    return not item.stops_on_error or any(h.startswith(("||", "&&", "|")) for h in item.hides_failure)


def _hidden(item: Installed) -> HiddenFailure:
    reasons = (["no 'set -e'"] if not item.stops_on_error else []) + [f"'{h}'" for h in item.hides_failure]
    return HiddenFailure(item.path, item.image_path, item.script, item.line, tuple(reasons))


def lines(inspection: Inspection) -> list[str]:
    """The human report, for stdout."""
    plan = inspection.plan
    out = [f"{inspection.label}: {len(inspection.files)} files, {len(plan.copied)} shipped", "", DOCKERFILE]
    events: list[tuple[int, str]] = [(w.line, f"WORKDIR {w.path}") for w in plan.dockerfile.workdirs]
    for copy in plan.dockerfile.copies:
        count = sum(1 for line in plan.copied_by.values() if line == copy.line)
        flags = "".join(f" {f}" for f in copy.flags)
        out_sources = " ".join(copy.sources)
        events.append((copy.line, f"{copy.instruction}{flags} {out_sources} -> {copy.destination} "
                                  f"({count} file{'s' if count != 1 else ''})"))
    for run in plan.dockerfile.runs:
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
        for item in dict.fromkeys(i for i in plan.installed if i.script == script.path):  # a loop may repeat one
            hides = f"  [{', '.join(item.hides_failure)}]" if item.hides_failure else ""
            out.append(f"  {item.line:>4}  {item.path} -> {item.image_path}{hides}")
        if script.body.unknown:
            out.append(f"        unresolved variables: {', '.join('$' + v for v in script.body.unknown)}")
    out += ["", "Patch targets"]
    for target in inspection.targets:
        if target.shipped is None:
            out.append(f"  {target.target}: NOT SHIPPED: {target.problem}")
        else:
            out.append(f"  {target.target} <- {target.shipped}")
            out.extend(f"        -> {image}" for image in target.image_paths)
            if target.mirrors:
                out.append(f"        stale copies synced by apply: {', '.join(target.mirrors)}")
        out.append(f"        patches: {', '.join(target.patches)}")
    out += ["", f"Shipped files ({len(plan.copied)})"]
    for path, image in sorted(plan.copied.items()):
        installed = [i.image_path for i in plan.installed if i.path == path]
        out.append(f"  {path} -> {', '.join([image, *installed])}")
    out += ["", f"Never shipped ({len(inspection.unshipped)} files)"]
    out.extend(f"  {entry}" for entry in _collapse(inspection.unshipped, set(plan.copied)))
    return out


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
        "shipped": [
            {"path": path, "image_paths": [image, *(i.image_path for i in plan.installed if i.path == path)]}
            for path, image in sorted(plan.copied.items())
        ],
        "installed": [
            {"path": i.path, "image_path": i.image_path, "script": i.script, "line": i.line,
             "hides_failure": list(i.hides_failure), "stops_on_error": i.stops_on_error}
            for i in plan.installed
        ],
        "targets": [
            {"target": t.target, "patches": list(t.patches), "shipped": t.shipped, "image_paths": list(t.image_paths),
             "mirrors": list(t.mirrors), "problem": t.problem}
            for t in inspection.targets
        ],
        "never_shipped": list(inspection.unshipped),
        "dockerignored": list(plan.ignored),
        "warnings": [
            {"path": w.path, "image_path": w.image_path, "script": w.script, "line": w.line,
             "reasons": list(w.reasons), "message": w.message()}
            for w in inspection.warnings
        ],
    }
