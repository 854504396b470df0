"""Show an UpgradeReport: text for a terminal, JSON for machines, Markdown for the pull request.

Text and Markdown open with the verdict and its reasons, most serious
first, print each changed scope's diff once (patches refer to it by
number), and end with the command to run next.
"""

from __future__ import annotations

import json
from typing import Any

from ..archive.paths import printable
from ..manifest_file import MANIFEST
from ..patchset.templates import make_environment, render
from ..report import ExitCode, Verdict
from ..resources import tool_templates_dir
from ..shipping import Installed
from .render import fence
from .upgrade import NOT_SHIPPED, PatchComparison, RuleError, RulesOn, ScopeChange, Shipping, UpgradeReport, \
    installed_text

MARKDOWN_TEMPLATE = "upgrade.md.j2"


def to_json(report: UpgradeReport) -> dict[str, Any]:
    """Turn the report into plain data."""
    verdict = report.verdict
    return {
        "old": report.old,
        "new": report.new,
        "verdict": verdict.to_json(),
        "needs_review": verdict.exit_code is not ExitCode.OK,
        "patches": [_patch_json(p) for p in report.patches],
        "scope_diffs": [_scope_diff_json(s, report) for s in report.scope_diffs],
        "shipping": {
            s.target: {"old": s.old_path, "new": s.new_path, "old_installed": _texts(s.old_installed),
                       "new_installed": _texts(s.new_installed), "moved": s.moved, "gone": s.gone,
                       "old_problem": s.old_problem, "new_problem": s.new_problem}
            for s in report.shipping
        },
        "mirrors": {
            "appeared": [{"shipped": g.shipped, "mirrors": list(g.mirrors)} for g in report.mirrors_appeared],
            "went": [{"shipped": g.shipped, "mirrors": list(g.mirrors)} for g in report.mirrors_went],
        },
        "rules": {
            "new_errors": [_error_json(e) for e in report.new_errors],
            "fixed": [_error_json(e) for e in report.fixed],
            "new_warnings": [_error_json(e) for e in report.new_warnings],
            "gone_warnings": [_error_json(e) for e in report.gone_warnings],
            "old": _rules_json(report.rules_old),
            "new": _rules_json(report.rules_new),
        },
        # Which drop is a context read as its manifest records it: the drop it was made from, the patches read so.
        "records": {"old": report.old_record.to_json(), "new": report.new_record.to_json()},
        "next": verdict.next,
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
        # Machines get each scope's diff here too; text and Markdown print it once (scope_diffs).
        "scopes": [{"scope": s.scope, "changed": s.changed, "diff": s.diff, "note": s.note} for s in p.scopes],
        "needs_review": p.needs_review,
    }


def _scope_diff_json(scope: ScopeChange, report: UpgradeReport) -> dict[str, Any]:
    return {"number": scope.number, "scope": scope.scope, "path": scope.path, "note": scope.note,
            "diff": scope.diff, "patches": _users(scope, report)}


def _users(scope: ScopeChange, report: UpgradeReport) -> list[str]:
    return [p.patch.id for p in report.patches if scope in p.scopes]


def _rules_json(rules: RulesOn) -> dict[str, Any]:
    return {"complete": rules.complete, "applied": rules.applied, "patches": rules.patches,
            "errors": [_error_json(e) for e in rules.errors], "warnings": [_error_json(e) for e in rules.warnings]}


def _texts(installed: tuple[Installed, ...]) -> list[str]:
    return [installed_text(i) for i in installed]


def _listed(installed: tuple[Installed, ...]) -> str:
    return ", ".join(_texts(installed)) or "nothing"


def _error_json(error: RuleError) -> dict[str, Any]:
    return {"rule": error.rule, "path": error.path, "line": error.line, "message": error.message}


def to_json_text(report: UpgradeReport) -> str:
    """Write ``to_json`` as indented JSON text."""
    return json.dumps(to_json(report), indent=2)


def headline(report: UpgradeReport, verdict: Verdict) -> str:
    """Say the verdict in one line: the exit code and what it rests on."""
    if verdict.exit_code is ExitCode.OK:
        return (f"patcher upgrade {report.old} -> {report.new}: exit 0: every patch applies on NEW as on OLD, "
                "the patched NEW passes the safety rules, and the shipped copies are where they were")
    count = len(verdict.failing)
    return (f"patcher upgrade {report.old} -> {report.new}: exit {int(verdict.exit_code)}: "
            f"{count} reason{'s' if count != 1 else ''} to look before shipping NEW, most serious first:")


def text(report: UpgradeReport) -> str:
    """Render the report for a terminal: the verdict, each patch, each scope diff once, what moved, the rules."""
    verdict = report.verdict
    out = [headline(report, verdict)]
    out.extend(f"  {reason.line()}" for reason in verdict.reasons)
    out.append("")
    out.extend(record_lines(report))
    for p in report.patches:
        old, new = (f"{status} (as recorded)" if recorded else status
                    for status, recorded in ((p.old, p.old_recorded), (p.new, p.new_recorded)))
        out.append(f"patch {p.patch.id}: {old} -> {new}" + (" (needs review)" if p.needs_review else ""))
        if p.diagnostic:
            out.append(f"  fails on NEW: {p.diagnostic}")
        elif p.new == NOT_SHIPPED:
            out.append("  not patched on NEW: NEW does not ship its target")
        if p.captures_changed:
            out.append("  applies, but what it captured changed:")
            for c in p.captures:
                where = f"step {c.step}" + (f", match {c.match}" if c.match else "")
                out.append(f"    {where}, {c.binding}:")
                out.append(f"      before: {c.old}")
                out.append(f"      after:  {c.new}")
        out.extend(f"  {_scope_line(scope)}" for scope in p.scopes)
    for scope in report.scope_diffs:
        out.append("")
        note = f", {scope.note}" if scope.note else ""
        out.append(f"diff {scope.number}: scope {scope.scope or '(module)'} in {scope.path}{note} "
                   f"(relied on by {', '.join(_users(scope, report))})")
        out.extend("    " + line for line in scope.diff.splitlines())
    out.append("")
    out.extend(_shipping_line(s) for s in report.shipping)
    for g in report.mirrors_appeared:
        out.append(f"mirror group appeared: {g.shipped} <- {', '.join(g.mirrors)}")
    for g in report.mirrors_went:
        out.append(f"mirror group went: {g.shipped} <- {', '.join(g.mirrors)}")
    for name, rules in (("OLD", report.rules_old), ("NEW", report.rules_new)):
        out.append(f"safety rules on {name}, {rules.built()}: {len(rules.errors)} error(s), "
                   f"{len(rules.warnings)} warning(s)")
    for label, found in (("safety rule error new in NEW", report.new_errors),
                         ("safety rule error gone in NEW", report.fixed),
                         ("rule warning new in NEW", report.new_warnings),
                         ("rule warning gone in NEW", report.gone_warnings)):
        out.extend(f"{label}: {e.path}:{e.line}: {e.rule}: {e.message}" for e in found)
    out.append(f"next: {verdict.next}")
    return "\n".join(out) + "\n"


def record_lines(report: UpgradeReport) -> list[str]:
    """Say which drop is a context read as its manifest records it, and that the scopes were compared as patched."""
    lines = []
    for side, use in (("OLD", report.old_record), ("NEW", report.new_record)):
        if use.read:
            sha = f" (sha256 {use.origin_sha256})" if use.origin_sha256 else ""
            lines.append(f"{side} is a context apply wrote from {printable(use.origin)}{sha}: status and fingerprints as its "
                         f"{MANIFEST} records them on that drop for {', '.join(use.patches) or 'no patch'}")
    if report.as_patched:
        lines.append("scopes compared as patched on both drops (a context holds patched code)")
    return lines


def _scope_line(scope: ScopeChange) -> str:
    name = scope.scope or "(module)"
    if scope.changed is None:
        return f"scope {name}: not compared ({scope.note})"
    if not scope.changed:
        return f"scope {name}: unchanged" + (f" ({scope.note})" if scope.note else "")
    note = f" ({scope.note})" if scope.note else ""
    return f"scope {name}: changed{note}" + (f": see diff {scope.number}" if scope.number else "")


def _shipping_line(s: Shipping) -> str:
    installs = f"{_listed(s.old_installed)} -> {_listed(s.new_installed)}"
    if s.new_path is None:
        return f"shipped copy of {s.target}: NOT SHIPPED by NEW ({s.new_problem}); OLD ships {s.old_path or 'none'}"
    if s.old_path is None:
        return f"shipped copy of {s.target}: {s.new_path}; OLD shipped none ({s.old_problem})"
    if s.moved and s.old_path == s.new_path:
        return f"shipped copy of {s.target} ({s.new_path}) is installed elsewhere: {installs}"
    if s.moved:
        return f"shipped copy of {s.target} moved: {s.old_path} -> {s.new_path}; installed as {installs}"
    return f"shipped copy of {s.target}: {s.new_path}, unchanged"


def markdown(report: UpgradeReport) -> str:
    """Render the report as Markdown, for the pull request that bumps the vendor drop."""
    environment = make_environment(tool_templates_dir())
    diffs = [{**_scope_diff_json(s, report), "fence": fence(s.diff)} for s in report.scope_diffs]
    sides = [f"{name}, {rules.built()}: {len(rules.errors)} error(s), {len(rules.warnings)} warning(s)"
             for name, rules in (("OLD", report.rules_old), ("NEW", report.rules_new))]
    values = {"report": to_json(report), "diffs": diffs, "rules_sides": sides, "record_lines": record_lines(report),
              "shipping_lines": [_shipping_line(s) for s in report.shipping
                                 if s.moved or s.new_path is None or s.old_path is None]}
    return render(environment, name=MARKDOWN_TEMPLATE, values=values)
