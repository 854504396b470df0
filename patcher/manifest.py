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
from .manifest_file import Record, RecordedPatch
from .patchset.outcome import PatchOutcome, Status
from .pipeline import Build, sha256_hex
from .records import StepPrint


def render_manifest(build: Build, input_name: str) -> bytes:
    """The manifest's bytes; every value is deterministic for the same input and patch set.

    It says how the context was made from the vendor drop (``origin``):
    when the input is a context apply wrote (``build.record``), each patch
    this run finds already applied keeps the status and step fingerprints
    that run recorded (same patch, file and parameters), each stale copy
    whether it differed then, and the files that run changed stay listed,
    so running apply on its own output gives an equivalent manifest: the
    same but for ``input``, which names what this run read.
    """
    record = build.record
    patches = []
    for file in build.files:
        for outcome in file.outcomes:
            kept = _kept(record, outcome, file.path)
            steps = [_step_json(step) for step in (kept.steps if kept else outcome.prints)]
            patches.append({"id": outcome.patch.id, "file": file.path,
                            "status": kept.status if kept else outcome.status.value,
                            "params": dict(outcome.patch.values), "steps": steps})
    differed = {(m.path, m.shipped) for m in record.mirrors if m.differed} if record else set()
    changed = {path: sha256_hex(data) for path, data in build.changes.items()}
    for path, digest in (record.changed.items() if record else ()):
        changed.setdefault(path, digest)  # input_record checked the tree still holds these bytes
    values = {
        "version": __version__,
        "input_name": input_name,
        "input_sha256": build.tree.sha256(),
        "stage": build.stage,
        "origin_name": record.origin_name if record else input_name,
        "origin_sha256": record.origin_sha256 if record else build.tree.sha256(),
        "series": [p.id for p in build.patch_set.patches],
        "commit": build.patch_set.commit,
        # Never a silent null: why there is no commit (vcs.read_commit), None when there is one.
        "commit_reason": None if build.patch_set.commit is not None else (
            build.patch_set.commit_reason or "not read: the patch set was loaded without reading its git commit"),
        "patches": patches,
        "mirrors": [
            {"path": m.path, "shipped": m.shipped, "differed": m.differed or (m.path, m.shipped) in differed}
            for m in build.mirrors
        ],
        "changed": dict(sorted(changed.items())),
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
        f'  "stage": {_json(values["stage"])},\n'
        f'  "patch_set": {{"series": {_json(values["series"])}, "commit": {_json(values["commit"])},'
        f' "commit_reason": {_json(values["commit_reason"])}}},\n'
        f'  "patches": [\n{_lines(patches)}  ],\n'
        f'  "mirrors": [\n{_lines(mirrors)}  ],\n'
        f'  "changed_files": {{\n{_lines(changed)}  }},\n'
        f'  "allowed_rules": {_json(values["allowed"])},\n'
        f'  "origin": {{"name": {_json(values["origin_name"])}, "sha256": {_json(values["origin_sha256"])}}}\n'
        "}\n"
    )
    json.loads(text)  # a layout edit that breaks JSON must fail here, not in a reader
    return text.encode("utf-8")


def _kept(record: Record | None, outcome: PatchOutcome, path: str) -> RecordedPatch | None:
    """The recorded run of a patch this run finds already applied: same patch, file and parameters."""
    if record is None or outcome.status is not Status.ALREADY_APPLIED:
        return None
    kept = record.patch(outcome.patch.id, path)
    if kept is None or kept.status == "failed" or _canonical(kept.params) != _canonical(dict(outcome.patch.values)):
        return None
    return kept


def _canonical(params: Mapping[str, Any]) -> str:
    # As JSON, the way the manifest holds them: 8192 and 8192, NaN and NaN compare equal.
    return json.dumps(params, sort_keys=True)


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
