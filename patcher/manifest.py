"""Render the manifest that records what a run did, from ``templates/manifest.json.j2``."""

from __future__ import annotations

import json

from . import __version__
from .patchset.templates import make_environment, render
from .pipeline import Build, sha256_hex
from .records import StepPrint
from .resources import tool_templates_dir

TEMPLATE = "manifest.json.j2"


def render_manifest(build: Build, input_name: str) -> bytes:
    """The manifest's bytes; every value is deterministic for the same input and patch set."""
    values = {
        "version": __version__,
        "input_name": input_name,
        "input_sha256": build.tree.sha256(),
        "series": [p.id for p in build.patch_set.patches],
        "commit": build.patch_set.commit,
        # Never a silent null: why there is no commit (vcs.read_commit), None when there is one.
        "commit_reason": None if build.patch_set.commit is not None else (
            build.patch_set.commit_reason or "not read: the patch set was loaded without reading its git commit"),
        "patches": [
            {"id": o.patch.id, "file": f.path, "status": o.status.value, "params": dict(o.patch.values),
             "steps": [_step_json(p) for p in o.prints]}
            for f in build.files
            for o in f.outcomes
        ],
        "mirrors": [
            {"path": m.path, "shipped": m.shipped, "differed": m.differed} for m in build.mirrors
        ],
        "changed": {path: sha256_hex(data) for path, data in sorted(build.changes.items())},
        "allowed": [{"rule": rule, "reason": reason} for rule, reason in build.allowed],
    }
    text = render(make_environment(tool_templates_dir()), name=TEMPLATE, values=values)
    json.loads(text)  # a template edit that breaks JSON must fail here, not in a reader
    return text.encode("utf-8")


def _step_json(step: StepPrint) -> dict[str, object]:
    """One step's matches: the sha256 of the normalised code each matched, and of each binding."""
    return {"step": step.step, "matches": [
        {"code": m.code.sha256, "bindings": {name: p.sha256 for name, p in sorted(m.bindings.items())}}
        for m in step.matches]}
