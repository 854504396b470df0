"""Show an UpgradeReport: text for a terminal, JSON for machines, Markdown for the pull request."""

from __future__ import annotations

import json
from typing import Any

from ..patchset.templates import make_environment, render
from ..resources import tool_templates_dir
from ..shipping import Installed
from .upgrade import PatchComparison, UpgradeReport, installed_text

MARKDOWN_TEMPLATE = "upgrade.md.j2"


def to_json(report: UpgradeReport) -> dict[str, Any]:
    """Turn the report into plain data."""
    return {
        "old": report.old,
        "new": report.new,
        "needs_review": report.needs_review,
        "patches": [_patch_json(p) for p in report.patches],
        "shipping": {
            s.target: {"old": s.old_path, "new": s.new_path, "old_installed": _texts(s.old_installed),
                       "new_installed": _texts(s.new_installed), "moved": s.moved}
            for s in report.shipping
        },
        "mirrors": {
            "appeared": [{"shipped": g.shipped, "mirrors": list(g.mirrors)} for g in report.mirrors_appeared],
            "went": [{"shipped": g.shipped, "mirrors": list(g.mirrors)} for g in report.mirrors_went],
        },
        "rules": {
            "new_errors": [_error_json(e) for e in report.new_errors],
            "fixed": [_error_json(e) for e in report.fixed],
        },
    }


def _patch_json(p: PatchComparison) -> dict[str, Any]:
    diagnostic = p.failure.diagnostic if p.failure is not None else None
    return {
        "id": p.patch.id,
        "old": p.old,
        "new": p.new,
        "diagnostic": p.diagnostic,
        "closest": None if diagnostic is None else diagnostic.to_json(),
        "old_diagnostic": p.old_diagnostic,
        "captures_changed": p.captures_changed,
        "captures": [{"step": c.step, "match": c.match, "binding": c.binding, "old": c.old, "new": c.new}
                     for c in p.captures],
        "scopes": [{"scope": s.scope, "changed": s.changed, "diff": s.diff, "note": s.note} for s in p.scopes],
        "needs_review": p.needs_review,
    }


def _texts(installed: tuple[Installed, ...]) -> list[str]:
    return [installed_text(i) for i in installed]


def _listed(installed: tuple[Installed, ...]) -> str:
    return ", ".join(_texts(installed)) or "nothing"


def _error_json(error: Any) -> dict[str, Any]:
    return {"rule": error.rule, "path": error.path, "line": error.line, "message": error.message}


def to_json_text(report: UpgradeReport) -> str:
    """Write ``to_json`` as indented JSON text."""
    return json.dumps(to_json(report), indent=2)


def text(report: UpgradeReport) -> str:
    """Render the report for a terminal: one block per patch, then shipping, mirrors and rules."""
    out = [f"patcher upgrade: {report.old} -> {report.new}"]
    for p in report.patches:
        verdict = "needs review" if p.needs_review else "same"
        out.append(f"patch {p.patch.id}: {p.old} -> {p.new} ({verdict})")
        if p.diagnostic:
            out.append(f"  fails on NEW: {p.diagnostic}")
        if p.captures_changed:
            out.append("  applies, but what it captured changed:")
            for c in p.captures:
                where = f"step {c.step}" + (f", match {c.match}" if c.match else "")
                out.append(f"    {where}, {c.binding}:")
                out.append(f"      before: {c.old}")
                out.append(f"      after:  {c.new}")
        for scope in p.scopes:
            state = "changed" if scope.changed else "unchanged"
            out.append(f"  scope {scope.scope or '(module)'}: {state}" + (f" ({scope.note})" if scope.note else ""))
            out.extend("    " + line for line in scope.diff.splitlines())
    for s in report.shipping:
        installs = f"{_listed(s.old_installed)} -> {_listed(s.new_installed)}"
        if s.moved and s.old_path == s.new_path:
            out.append(f"shipped copy of {s.target} ({s.new_path}) is installed elsewhere: {installs}")
        elif s.moved:
            out.append(f"shipped copy of {s.target} moved: {s.old_path} -> {s.new_path}; installed as {installs}")
        else:
            out.append(f"shipped copy of {s.target}: {s.new_path}, unchanged")
    for g in report.mirrors_appeared:
        out.append(f"mirror group appeared: {g.shipped} <- {', '.join(g.mirrors)}")
    for g in report.mirrors_went:
        out.append(f"mirror group went: {g.shipped} <- {', '.join(g.mirrors)}")
    for e in report.new_errors:
        out.append(f"safety rule error new in NEW: {e.path}:{e.line}: {e.rule}: {e.message}")
    for e in report.fixed:
        out.append(f"safety rule error gone in NEW: {e.path}:{e.line}: {e.rule}: {e.message}")
    out.append("result: needs review" if report.needs_review else
               "result: every patch behaves on NEW as on OLD, and nothing it relies on changed")
    return "\n".join(out) + "\n"


def markdown(report: UpgradeReport) -> str:
    """Render the report as Markdown, for the pull request that bumps the vendor drop."""
    environment = make_environment(tool_templates_dir())
    return render(environment, name=MARKDOWN_TEMPLATE, values={"report": to_json(report)})
