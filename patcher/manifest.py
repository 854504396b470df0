"""Write the manifest that records what a run did: JSON, laid out one patch, mirror and changed file a line.

The bytes are those the Jinja2 template ``manifest.json.j2`` wrote before
(each value as its ``tojson`` filter gives it: keys sorted, non-ASCII and
``< > & '`` escaped), so manifests of older runs compare line by line with
new ones. ``json.dumps`` makes them without importing Jinja2, which a run
the patch cache answers would otherwise load for this alone.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from . import __version__
from .pipeline import Build, sha256_hex
from .records import StepPrint


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
    return manifest_bytes(values)


def manifest_bytes(values: Mapping[str, Any]) -> bytes:
    """Lay ``values`` (the keys ``render_manifest`` fills) out as the manifest's JSON text, UTF-8."""
    patches = [f'    {{"id": {_json(p["id"])}, "file": {_json(p["file"])}, "status": {_json(p["status"])},'
               f' "params": {_json(p["params"])},\n'
               f'     "steps": {_json(p["steps"])}}}' for p in values["patches"]]
    mirrors = [f'    {{"path": {_json(m["path"])}, "synced_to": {_json(m["shipped"])},'
               f' "differed_before": {_json(m["differed"])}}}' for m in values["mirrors"]]
    changed = [f"    {_json(path)}: {_json(digest)}" for path, digest in values["changed"].items()]
    text = (
        "{\n"
        f'  "tool": {{"name": "patcher", "version": {_json(values["version"])}}},\n'
        f'  "input": {{"name": {_json(values["input_name"])}, "sha256": {_json(values["input_sha256"])}}},\n'
        f'  "patch_set": {{"series": {_json(values["series"])}, "commit": {_json(values["commit"])},'
        f' "commit_reason": {_json(values["commit_reason"])}}},\n'
        f'  "patches": [\n{_lines(patches)}  ],\n'
        f'  "mirrors": [\n{_lines(mirrors)}  ],\n'
        f'  "changed_files": {{\n{_lines(changed)}  }},\n'
        f'  "allowed_rules": {_json(values["allowed"])}\n'
        "}\n"
    )
    json.loads(text)  # a layout edit that breaks JSON must fail here, not in a reader
    return text.encode("utf-8")


def _json(value: Any) -> str:
    """``value`` as Jinja2's ``tojson`` writes it: ``json.dumps`` with sorted keys, then HTML-safe."""
    return (json.dumps(value, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("'", "\\u0027"))


def _lines(items: list[str]) -> str:
    """One item a line, separated by commas (none after the last)."""
    return ",\n".join(items) + "\n" if items else ""


def _step_json(step: StepPrint) -> dict[str, object]:
    """One step's matches: the sha256 of the normalised code each matched, and of each binding."""
    return {"step": step.step, "matches": [
        {"code": m.code.sha256, "bindings": {name: p.sha256 for name, p in sorted(m.bindings.items())}}
        for m in step.matches]}
