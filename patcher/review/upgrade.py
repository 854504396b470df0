"""Compare how the patch series fares on two vendor drops: the data behind ``patcher upgrade``.

For each patch: its status on OLD and on NEW, the diagnostic when it fails,
whether the code it captured changed (fingerprints, see
``transforms/fingerprint.py``), and for each scope it touches or requires
whether the vendor changed that scope's code, judged on syntax with the
stdlib ``ast`` (comments, blank lines, line breaks inside brackets and CRLF
are no change). Then what moved around the patches: the shipped copy of
each target, mirror groups, and safety-rule errors.

Everything here returns values; ``cli/upgrade.py`` prints and exits.
"""

from __future__ import annotations

import ast
import copy
import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from ..depth import parse_problem
from ..patchset.model import Patch
from ..patchset.runner import FileOutcome, PatchOutcome, Status
from ..report import ExitCode
from ..shipping import Installed, MirrorGroup

if TYPE_CHECKING:
    from ..checks import CheckResult, Policy
    from ..archive.tree import SourceTree
    from ..patchset.model import PatchSet
    from ..pipeline import Build

STATUS = {Status.APPLIED: "applies", Status.ALREADY_APPLIED: "already-applied", Status.FAILED: "fails"}


@dataclass(frozen=True)
class Drop:
    """One vendor drop as the series sees it: the build, and the rules run on the drop as it is."""

    label: str
    build: "Build"
    rules: "CheckResult"


def read_drop(tree: "SourceTree", patch_set: "PatchSet", policy: "Policy", label: str) -> Drop:
    """Run the series on ``tree`` (nothing written) and the safety rules on the tree as it is."""
    from ..pipeline import build, check_input

    result = build(tree, patch_set)
    return Drop(label, result, check_input(result, policy))


@dataclass(frozen=True)
class ScopeChange:
    """Whether the vendor changed one scope's code, and the unified diff of that scope alone."""

    scope: str
    changed: bool
    diff: str  # empty when unchanged
    note: str = ""  # e.g. "missing in NEW"


@dataclass(frozen=True)
class CaptureChange:
    """One binding (or the matched code, or the match count) of one step that differs."""

    step: int
    match: int  # 1-based
    binding: str  # metavariable name; "(matched code)" or "(matches)" for the whole match
    old: str
    new: str


@dataclass(frozen=True)
class PatchComparison:
    """One patch on OLD and on NEW."""

    patch: Patch
    old: str
    new: str
    diagnostic: str  # NEW's failure with the closest code ("" unless it fails on NEW)
    old_diagnostic: str
    failure: PatchOutcome | None  # NEW's failed outcome, for structured data
    captures: tuple[CaptureChange, ...]
    scopes: tuple[ScopeChange, ...]

    @property
    def captures_changed(self) -> bool:
        """Tell whether the patch applies on both but what it captured differs."""
        return bool(self.captures)

    @property
    def needs_review(self) -> bool:
        """Tell whether the patch behaves differently on NEW, or anything it relies on changed."""
        return self.old != self.new or self.captures_changed or any(s.changed for s in self.scopes)


@dataclass(frozen=True)
class Shipping:
    """Where one target's shipped copy comes from and lands, on OLD and on NEW."""

    target: str
    old_path: str
    new_path: str
    old_installed: tuple[Installed, ...]  # in the order of their installed_text
    new_installed: tuple[Installed, ...]

    @property
    def moved(self) -> bool:
        """Tell whether another file ships, or it is installed elsewhere."""
        return (self.old_path != self.new_path
                or {i.image_path for i in self.old_installed} != {i.image_path for i in self.new_installed})


@dataclass(frozen=True)
class RuleError:
    """A safety-rule error, compared across drops by rule, file and message (not line)."""

    rule: str
    path: str
    line: int
    message: str


@dataclass(frozen=True)
class UpgradeReport:
    """Everything ``patcher upgrade`` says."""

    old: str
    new: str
    patches: tuple[PatchComparison, ...]
    shipping: tuple[Shipping, ...]
    mirrors_appeared: tuple[MirrorGroup, ...]
    mirrors_went: tuple[MirrorGroup, ...]
    new_errors: tuple[RuleError, ...]
    fixed: tuple[RuleError, ...]

    @property
    def needs_review(self) -> bool:
        """Tell whether anything a reviewer must look at changed."""
        return (any(p.needs_review for p in self.patches) or any(s.moved for s in self.shipping)
                or bool(self.mirrors_appeared or self.mirrors_went or self.new_errors or self.fixed))

    @property
    def exit_code(self) -> ExitCode:
        """Return 0 when NEW behaves as OLD for every patch and nothing they rely on changed, else 1."""
        return ExitCode.DIFFERENCE if self.needs_review else ExitCode.OK


def compare(old: Drop, new: Drop) -> UpgradeReport:
    """Compare the series on two drops."""
    patch_set = new.build.patch_set
    old_files = _outcomes(old.build)
    new_files = _outcomes(new.build)
    patches = []
    for patch in patch_set.patches:
        old_file, old_outcome = old_files[patch.id]
        new_file, new_outcome = new_files[patch.id]
        patches.append(_compare_patch(patch, old_file, old_outcome, new_file, new_outcome))
    shipping = tuple(_shipping(target, old.build, new.build) for target in patch_set.targets)
    before, after = set(_mirror_groups(old.build)), set(_mirror_groups(new.build))
    # A shipped copy that moved keeps its findings: compare them under its new path.
    renamed = {s.old_path: s.new_path for s in shipping}
    old_errors, new_errors = _rule_errors(old.rules), _rule_errors(new.rules)
    old_keys = {_error_key(e, renamed) for e in old_errors}
    new_keys = {_error_key(e) for e in new_errors}
    return UpgradeReport(
        old.label, new.label, tuple(patches), shipping,
        tuple(sorted(after - before, key=_group_key)), tuple(sorted(before - after, key=_group_key)),
        tuple(e for e in new_errors if _error_key(e) not in old_keys),
        tuple(e for e in old_errors if _error_key(e, renamed) not in new_keys),
    )


def _outcomes(build: "Build") -> dict[str, tuple[FileOutcome, PatchOutcome | None]]:
    found: dict[str, tuple[FileOutcome, PatchOutcome | None]] = {}
    for outcome in build.files:
        by_id = {o.patch.id: o for o in outcome.outcomes}
        for patch in build.patch_set.for_target(_target_of(build, outcome.path)):
            found[patch.id] = (outcome, by_id.get(patch.id))
    return found


def _target_of(build: "Build", path: str) -> str:
    return next(target for target, shipped in build.targets.items() if shipped == path)


def _status(outcome: PatchOutcome | None) -> str:
    return "fails" if outcome is None else STATUS[outcome.status]


def _diagnostic(file: FileOutcome, outcome: PatchOutcome | None) -> str:
    if outcome is None:
        return f"{file.path} does not parse: {file.parse_error}"
    return outcome.message if outcome.status is Status.FAILED else ""


def _compare_patch(patch: Patch, old_file: FileOutcome, old: PatchOutcome | None,
                   new_file: FileOutcome, new: PatchOutcome | None) -> PatchComparison:
    captures: tuple[CaptureChange, ...] = ()
    if old is not None and new is not None and old.status is new.status is Status.APPLIED:
        captures = tuple(_capture_changes(old, new))
    scopes = tuple(scope_change(scope, old_file, new_file) for scope in patch_scopes(patch))
    failure = new if new is not None and new.status is Status.FAILED else None
    return PatchComparison(patch, _status(old), _status(new), _diagnostic(new_file, new),
                           _diagnostic(old_file, old), failure, captures, scopes)


def patch_scopes(patch: Patch) -> tuple[str, ...]:
    """List every scope a patch touches or requires, each once, in the order the patch names them."""
    names = [patch.scope, *(step.scope or patch.scope for step in patch.steps),
             *(m.scope for m in patch.applied_when), *(m.scope for m in patch.requires)]
    return tuple(dict.fromkeys(names))


def _capture_changes(old: PatchOutcome, new: PatchOutcome) -> Iterable[CaptureChange]:
    new_steps = {p.step: p for p in new.prints}
    for before in old.prints:
        after = new_steps.get(before.step)
        if after is None:
            continue
        if len(before.matches) != len(after.matches):
            yield CaptureChange(before.step, 0, "(matches)", str(len(before.matches)), str(len(after.matches)))
            continue
        for index, (a, b) in enumerate(zip(before.matches, after.matches), 1):
            named = False
            for name in sorted(set(a.bindings) | set(b.bindings)):
                x, y = a.bindings.get(name), b.bindings.get(name)
                if x is None or y is None or x.sha256 != y.sha256:
                    named = True
                    yield CaptureChange(before.step, index, name, x.text if x else "", y.text if y else "")
            if not named and a.code.sha256 != b.code.sha256:
                yield CaptureChange(before.step, index, "(matched code)", a.code.text, b.code.text)


# --------------------------------------------------------------------------- scopes


def scope_change(scope: str, old_file: FileOutcome, new_file: FileOutcome) -> ScopeChange:
    """Judge whether ``scope`` differs on syntax between the two files; diff its code alone."""
    old_module, new_module = _module(old_file.original), _module(new_file.original)
    broken = [name for name, module in (("OLD", old_module), ("NEW", new_module)) if module is None]
    if old_module is None or new_module is None:
        return ScopeChange(scope, True, "", f"{' and '.join(broken)} does not parse")
    old, new = _scope_source(old_module, scope), _scope_source(new_module, scope)
    if old is None and new is None:
        return ScopeChange(scope, False, "", "missing in OLD and NEW")
    if old is None or new is None:
        which = "OLD" if old is None else "NEW"
        text = _unified(old or ("", "", 1), new or ("", "", 1), old_file.path, new_file.path, scope)
        return ScopeChange(scope, True, text, f"missing in {which}")
    if old[0] == new[0]:
        return ScopeChange(scope, False, "")
    return ScopeChange(scope, True, _unified(old, new, old_file.path, new_file.path, scope))


@lru_cache(maxsize=4)
def _module(source: bytes) -> tuple[str, ast.Module] | None:
    """Parse a file once for all the scopes of all the patches on it: (LF text, tree), or None."""
    # Callers never mutate the tree: _own works on copies.
    try:
        text = source.decode("utf-8-sig").replace("\r\n", "\n")
        if parse_problem(text, strings_nest=False) is not None:  # too large or deep to parse and dump safely
            return None
        return text, ast.parse(text)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _scope_source(module: tuple[str, ast.Module], scope: str) -> tuple[str, str, int] | None:
    """Return (ast dump, LF source text, first line) of ``scope``, or None if missing."""
    text, tree = module
    node: ast.AST | None = tree
    for part in filter(None, scope.split(".")):
        node = _definition(node, part) if node is not None else None
    if node is None:
        return None
    lines = text.splitlines(keepends=True)
    if node is tree:
        return _own(tree, lines, 1, len(lines))
    assert isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    first = _first_line(node)
    if isinstance(node, ast.ClassDef):
        return _own(node, lines, first, node.end_lineno or first)
    return ast.dump(node), "".join(lines[first - 1 : node.end_lineno]), first


def _own(node: ast.Module | ast.ClassDef, lines: list[str], first: int, last: int) -> tuple[str, str, int]:
    """Reduce a module or class to its own code: methods and nested classes by signature only.

    Each method is a scope of its own: a patch that relies on one names it
    (as its scope, a step's, or in ``requires``), so a change inside an
    unrelated method is no change to the class a patch edits attributes of.
    """
    kept = list(range(first, last + 1))
    body: list[ast.stmt] = []
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.body:
            inner = range(statement.body[0].lineno, (statement.end_lineno or statement.lineno) + 1)
            if statement.body[0].lineno > statement.lineno:  # a one-line def keeps its line
                kept = [n for n in kept if n not in inner]
            stub = copy.copy(statement)
            stub.body = [ast.Pass()]
            body.append(stub)
        else:
            body.append(statement)
    shell = copy.copy(node)
    shell.body = body
    return ast.dump(shell), "".join(lines[n - 1] for n in kept), first


def _first_line(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _definition(node: ast.AST, name: str) -> ast.AST | None:
    # Like transforms/scope.py: definitions under if/try blocks count, nested functions' insides do not.
    body: list[ast.stmt] = list(getattr(node, "body", []))
    queue = list(body)
    while queue:
        statement = queue.pop(0)
        if isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name == name:
                return statement
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            queue.extend(getattr(statement, field, []))
    return None


def _unified(old: tuple[str, str, int], new: tuple[str, str, int], old_path: str, new_path: str, scope: str) -> str:
    lines = difflib.unified_diff(old[1].splitlines(keepends=True), new[1].splitlines(keepends=True),
                                 f"a/{old_path} ({scope})", f"b/{new_path} ({scope})")
    out = []
    for line in lines:
        # Hunk headers in the file's own line numbers, not the scope's.
        hunk = re.match(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", line)
        if hunk:
            line = (f"@@ -{int(hunk.group(1)) + old[2] - 1}{hunk.group(2) or ''} "
                    f"+{int(hunk.group(3)) + new[2] - 1}{hunk.group(4) or ''} @@\n")
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


# --------------------------------------------------------------------------- around the patches


def _shipping(target: str, old: "Build", new: "Build") -> Shipping:
    return Shipping(target, old.targets[target], new.targets[target],
                    _installed(old, target), _installed(new, target))


def _installed(build: "Build", target: str) -> tuple[Installed, ...]:
    return tuple(sorted(build.plan.find(target), key=installed_text))


def installed_text(installed: Installed) -> str:
    """Write an install as its image path, with the script line that installs it (none for a COPY)."""
    return f"{installed.image_path} ({installed.script}:{installed.line})" if installed.line else installed.image_path


def _mirror_groups(build: "Build") -> list[MirrorGroup]:
    groups: dict[str, list[str]] = {}
    for mirror in build.mirrors:
        groups.setdefault(mirror.shipped, []).append(mirror.path)
    return [MirrorGroup(shipped, tuple(sorted(paths))) for shipped, paths in groups.items()]


def _group_key(group: MirrorGroup) -> tuple[str, tuple[str, ...]]:
    return group.shipped, group.mirrors


def _rule_errors(result: "CheckResult") -> list[RuleError]:
    return [RuleError(v.rule, v.path, v.line, v.message) for v in result.errors]


def _error_key(error: RuleError, renamed: dict[str, str] | None = None) -> tuple[str, str, str]:
    path = (renamed or {}).get(error.path, error.path)
    return error.rule, path, error.message.replace(error.path, path)
