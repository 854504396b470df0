"""Compare how the patch series fares on two vendor drops: the data behind ``patcher upgrade``.

For each patch: its status on OLD and on NEW, the diagnostic when it fails,
whether the code it captured changed (fingerprints, see
``transforms/fingerprint.py``), and for each scope it touches or requires
whether the vendor changed that scope's code, judged on syntax with the
stdlib ``ast`` (comments, blank lines, line breaks inside brackets and CRLF
are no change). A scope is compared once, however many patches rely on it.
Then what moved around the patches: the shipped copy of each target (or
that a drop no longer ships it), mirror groups, and what the safety rules
say about each drop as ``apply`` would write it (patched, as far as the
patches apply there).

A drop may be a context ``apply`` wrote. Its code is patched, so the
patterns find every patch already applied and fingerprint nothing; its
manifest (``manifest_file.Record``) keeps what they found on the vendor
drop it was made from. While the context still holds what that run wrote
(``Build.record``), each patch it finds already applied, with the same
file and parameters as recorded, counts as recorded: the status and the
step fingerprints of that drop (the texts are not recorded: shown as
recorded). Its scopes are patched code, so they are compared with the
other drop as patched too, like with like. A context that no longer holds
what its manifest says, or whose manifest does not read, is just a tree,
said in a note. The record is never trusted for what ships: the scopes are
compared, and the rules run, on the bytes each drop holds.

The verdict (``UpgradeReport.verdict``) weighs all of it: exit 0 only when
every patch applies (or is already applied) on NEW as on OLD with the same
fingerprints, nothing it relies on changed, the patched NEW passes the
rules, and the shipped copies are where they were.

Everything here returns values; ``cli/upgrade.py`` prints and exits.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import os
import signal
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

from ..archive.paths import printable
from ..depth import parse_problem
from ..errors import PatcherError, ShippingError
from ..manifest_file import MANIFEST, Record, RecordError, read_record
from ..patchset.model import Patch, PatchSet
from ..patchset.outcome import FileOutcome, PatchOutcome, Status  # no libcst: a cached run imports none
from ..records import MatchPrint, Print, StepPrint
from ..report import ExitCode, Reason, Severity, Verdict
from ..shipping import Installed, MirrorGroup
from .textdiff import numbered_diff, text_lines

if TYPE_CHECKING:
    from ..archive.tree import SourceTree
    from ..checks import CheckResult, Policy
    from ..checks.runner import Ahead, FileRulesAhead
    from ..pipeline import Build
    from ..shipping import ShipPlan

STATUS = {Status.APPLIED: "applies", Status.ALREADY_APPLIED: "already-applied", Status.FAILED: "fails"}
NOT_SHIPPED = "not-shipped"  # the drop ships no single file as the patch's target
# The text of a fingerprint read from a manifest, which keeps each sha256 but not the code it was taken from.
AS_RECORDED = "(as recorded: the manifest keeps its fingerprint, not its code)"
AS_PATCHED = "as patched"  # the note of a scope compared on both drops as patched (a context is patched code)

Progress = Callable[[str], None]  # told the stage a run enters: "patching NEW", ...


@dataclass(frozen=True)
class Drop:
    """One vendor drop as the series sees it: the build (nothing written), and the rules on what it would ship."""

    label: str
    series: PatchSet  # the whole series, also the patches of targets this drop does not ship
    build: "Build"  # the series on the targets the drop ships
    rules: "CheckResult"  # on the shipped files as apply would write them, as far as the patches apply
    unshipped: Mapping[str, str]  # target -> why no single file ships as it
    record_note: str = ""  # why the manifest the drop holds is not read (it is compared as a tree)

    @property
    def record(self) -> Record | None:
        """Return the record of the run that wrote this drop, when it is a context that still holds what it wrote."""
        return self.build.record


def read_drops(old: "SourceTree", new: "SourceTree", patch_set: PatchSet, policy: "Policy",
               labels: tuple[str, str], progress: Progress | None = None,
               stages: tuple[str | None, str | None] = (None, None)) -> tuple[Drop, Drop]:
    """Read both drops, judging their shipped Python files beside the patching, each distinct file once.

    The file rules (parsing every shipped file is most of their cost) run
    in a forked child on the union of both drops' shipped files as they
    are, while this process patches; a file both drops ship at one path
    with the same bytes is judged once. The rules of each drop then run here on what
    apply would write: a file the rule cache knows, or that a patch
    changed, is judged here, and the child is waited for only when a file
    it judged is first needed (a warm cache never waits for it). ``stages``
    names the build stage that is each drop's image (None: the last).
    """
    from ..checks.runner import FileRulesAhead, read_shipped_python
    from ..shipping import plan_shipping

    tell = progress or (lambda stage: None)
    tell("reading what each drop ships")
    plans = plan_shipping(old, stages[0]), plan_shipping(new, stages[1])
    files = [read_shipped_python(tree, plan) for tree, plan in zip((old, new), plans)]
    # Judged under their own paths, which the rules read (module names, relative imports): a file both drops
    # ship at one path with the same bytes is judged once; where OLD's bytes differ, the child judges NEW's and
    # OLD's are judged here (a result counts only for the bytes it was found in).
    with FileRulesAhead({**files[0], **files[1]}, policy) as child:
        # OLD's targets are patched in a second child, into the patch cache, while NEW's are patched
        # here; OLD's build then reads them from the cache (a miss patches them here, as before).
        with _PatchedAhead(old, plans[0], patch_set) as old_ahead:
            tell("patching NEW")
            new_build = _build_shipped(new, patch_set, plans[1])
            tell("patching OLD")
            old_ahead.wait()
        builds = [_build_shipped(old, patch_set, plans[0]), new_build]
        tell("running the safety rules")
        shared = _SharedResults(child)
        drops = [_judged(label, patch_set, result, unshipped, policy, _ByPath(shared, found))
                 for label, (result, unshipped), found in zip(labels, builds, files)]
    return drops[0], drops[1]


class _PatchedAhead:
    """Patch one drop's targets in a forked child that stores the results in the patch cache.

    Patching a large target is most of what upgrade costs, and the two drops
    are independent: on a second core OLD is patched while this process
    patches NEW. The cache is the way back (an entry is a pure function of
    its key, checked when read), so nothing is trusted that the parent could
    not have computed: with the cache off, unwritable or damaged, the parent
    misses and patches OLD itself. The child reads no input (it shares the
    archive's file offset): it gets the targets' bytes in memory.
    """

    def __init__(self, tree: "SourceTree", plan: "ShipPlan", patch_set: PatchSet) -> None:
        from ..patchset.cache import cache_dir

        self._pid: int | None = None
        if cache_dir() is None or not hasattr(os, "fork") or threading.active_count() > 1:
            return
        # Build the steps once, before the fork: the child inherits them, and upgrade needs them anyway.
        for patch in patch_set.patches:
            _ = patch.steps
        targets = []
        for target in patch_set.targets:
            try:
                path = plan.shipped_copy(target)
                targets.append((path, tree.read(path), patch_set.for_target(target)))
            except PatcherError:
                continue  # not shipped, or unreadable: the build says so
        try:
            pid = os.fork()
        except OSError:
            return
        if pid == 0:  # the child: never returns
            status = 1
            try:
                from ..patchset.cache import cached_patch_source

                for path, data, patches in targets:
                    cached_patch_source(path, data, patches)
                status = 0
            finally:
                os._exit(status)  # no atexit handlers, no flushing the parent's buffers twice
        self._pid = pid

    def wait(self) -> None:
        """Wait for the child to finish writing the cache (whatever it managed)."""
        if self._pid is not None:
            os.waitpid(self._pid, 0)
            self._pid = None

    def __enter__(self) -> "_PatchedAhead":
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._pid is not None:  # the run stopped early: the child is not waited for
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = None


class _SharedResults:
    """What the child found, per path: waited for on the first lookup, then kept for both drops."""

    def __init__(self, child: "FileRulesAhead") -> None:
        self._child = child
        self._found: dict[str, Ahead] | None = None

    def get(self, path: str) -> "Ahead | None":
        if self._found is None:
            self._found = self._child.results()  # {} when the child failed: the rules then run here
        return self._found.get(path)


class _ByPath(Mapping[str, "Ahead"]):
    """One drop's view of the shared results: its shipped paths -> what the child found there (with its digest)."""

    def __init__(self, shared: _SharedResults, paths: Mapping[str, bytes]) -> None:
        self._shared, self._paths = shared, paths

    def __getitem__(self, path: str) -> "Ahead":
        found = self._shared.get(path) if path in self._paths else None
        if found is None:
            raise KeyError(path)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _build_shipped(tree: "SourceTree", patch_set: PatchSet, plan: "ShipPlan") -> tuple["Build", dict[str, str]]:
    """Patch the targets the drop ships; say why each other one is not shipped."""
    from ..pipeline import build

    unshipped: dict[str, str] = {}
    for target in patch_set.targets:
        try:
            plan.shipped_copy(target)
        except ShippingError as error:
            unshipped[target] = error.message
    shipped = replace(patch_set, patches=tuple(p for p in patch_set.patches if p.target not in unshipped))
    return build(tree, shipped, plan), unshipped


def _judged(label: str, patch_set: PatchSet, result: "Build", unshipped: dict[str, str], policy: "Policy",
            ahead: "Mapping[str, Ahead]") -> Drop:
    """Run the rules on what apply would write of the build (patched as far as the patches apply)."""
    from ..pipeline import check

    # The manifest comes with the drop: what it says is escaped before it reaches a terminal.
    note = printable(_unread_record(result.tree)) if result.record is None and result.record_note else ""
    return Drop(label, patch_set, result, check(result, policy, ahead), unshipped, note)


def _unread_record(tree: "SourceTree") -> str:
    """Say why the manifest TREE holds does not describe it (``pipeline.input_record`` found that it does not)."""
    from ..pipeline import sha256_hex

    try:
        record = read_record(tree)
    except RecordError as exc:
        return f"its {MANIFEST} is not one apply wrote ({exc})"
    for path, digest in (record.changed.items() if record is not None else ()):
        if not tree.exists(path) or sha256_hex(tree.read(path)) != digest:
            how = "changed" if tree.exists(path) else "is gone"
            return f"{printable(path)} {how} since its {MANIFEST} was written"
    return f"its {MANIFEST} does not describe it"


@dataclass(frozen=True)
class ScopeChange:
    """Whether the vendor changed one scope's code, and the unified diff of that scope alone."""

    scope: str
    changed: bool | None  # None: a drop does not ship the file, so nothing can be compared
    diff: str  # empty when unchanged
    note: str = ""  # e.g. "missing in NEW"
    path: str = ""  # the shipped file it lives in (NEW's, else OLD's)
    number: int = 0  # the number its diff is printed under, once for every patch; 0: no diff shown


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
    old: str  # applies, already-applied, fails or not-shipped
    new: str
    diagnostic: str  # NEW's failure with the closest code ("" unless it fails on NEW)
    old_diagnostic: str
    failure: PatchOutcome | None  # NEW's failed outcome, for structured data
    captures: tuple[CaptureChange, ...]
    scopes: tuple[ScopeChange, ...]
    old_recorded: bool = False  # OLD's status and fingerprints are what OLD's manifest records
    new_recorded: bool = False

    @property
    def captures_changed(self) -> bool:
        """Tell whether the patch applies on both but what it captured differs."""
        return bool(self.captures)

    @property
    def needs_review(self) -> bool:
        """Tell whether the patch behaves differently on NEW, or anything it relies on changed."""
        return (self.old != self.new or self.new in ("fails", NOT_SHIPPED) or self.captures_changed
                or any(s.changed for s in self.scopes))


@dataclass(frozen=True)
class Shipping:
    """Where one target's shipped copy comes from and lands, on OLD and on NEW."""

    target: str
    old_path: str | None  # None: the drop ships no single file as the target (see *_problem)
    new_path: str | None
    old_installed: tuple[Installed, ...]  # in the order of their installed_text
    new_installed: tuple[Installed, ...]
    old_problem: str = ""
    new_problem: str = ""

    @property
    def gone(self) -> bool:
        """Tell whether NEW ships no single file as the target (OLD did)."""
        return self.new_path is None and self.old_path is not None

    @property
    def moved(self) -> bool:
        """Tell whether another file ships, or it is installed elsewhere (both drops ship it)."""
        if self.old_path is None or self.new_path is None:
            return False
        return (self.old_path != self.new_path
                or {i.image_path for i in self.old_installed} != {i.image_path for i in self.new_installed})


@dataclass(frozen=True)
class RuleError:
    """A safety-rule finding, compared across drops by rule, file and message (not line)."""

    rule: str
    path: str
    line: int
    message: str


@dataclass(frozen=True)
class RulesOn:
    """What the safety rules say about one drop as apply would write it."""

    errors: tuple[RuleError, ...]
    warnings: tuple[RuleError, ...]
    applied: int  # patches that apply or are already applied there
    patches: int  # patches in the series

    @property
    def complete(self) -> bool:
        """Tell whether every patch could be applied: the rules judged what apply would write."""
        return self.applied == self.patches

    def built(self) -> str:
        """Say what the rules judged: the patched drop, or as much of it as could be built."""
        if self.complete:
            return "patched"
        return f"patched as far as the patches apply ({self.applied} of {self.patches})"


@dataclass(frozen=True)
class RecordUse:
    """What one drop's manifest contributed: the vendor drop it names, the patches read as recorded, notes."""

    read: bool = False  # the drop is a context that still holds what its manifest says
    origin: str = ""  # the vendor drop the context was made from, as the manifest names it
    origin_sha256: str | None = None
    patches: tuple[str, ...] = ()  # the patches whose status and fingerprints are the record's
    notes: tuple[tuple[str, str], ...] = ()  # (subject, text): a manifest not read, a patch recorded otherwise

    def to_json(self) -> dict[str, object] | None:
        """Give plain data; None when no record was read."""
        if not self.read:
            return None
        return {"origin": self.origin, "origin_sha256": self.origin_sha256, "patches": list(self.patches)}


@dataclass(frozen=True)
class UpgradeReport:
    """Everything ``patcher upgrade`` says."""

    old: str
    new: str
    patches: tuple[PatchComparison, ...]
    shipping: tuple[Shipping, ...]
    mirrors_appeared: tuple[MirrorGroup, ...]
    mirrors_went: tuple[MirrorGroup, ...]
    new_errors: tuple[RuleError, ...]  # errors of the patched NEW that the patched OLD has not
    fixed: tuple[RuleError, ...]  # errors of the patched OLD gone from the patched NEW
    new_warnings: tuple[RuleError, ...] = ()
    gone_warnings: tuple[RuleError, ...] = ()
    rules_old: RulesOn = RulesOn((), (), 0, 0)
    rules_new: RulesOn = RulesOn((), (), 0, 0)
    patch_args: tuple[str, ...] = ()  # the run's --patches/--set, repeated in the next command
    old_record: RecordUse = RecordUse()
    new_record: RecordUse = RecordUse()

    @property
    def as_patched(self) -> bool:
        """Tell whether the scopes were compared as patched: a drop is a context, patched code."""
        return self.old_record.read or self.new_record.read

    @property
    def scope_diffs(self) -> tuple[ScopeChange, ...]:
        """Every changed scope once, in the order of its number."""
        seen: dict[int, ScopeChange] = {}
        for patch in self.patches:
            for scope in patch.scopes:
                if scope.number:
                    seen.setdefault(scope.number, scope)
        return tuple(seen[n] for n in sorted(seen))

    @property
    def needs_review(self) -> bool:
        """Tell whether anything keeps the verdict from exit 0."""
        return self.verdict.exit_code is not ExitCode.OK

    @property
    def exit_code(self) -> ExitCode:
        """Return 0 when NEW ships as OLD did for every patch and passes the rules, else 1 (see ``verdict``)."""
        return self.verdict.exit_code

    @property
    def verdict(self) -> Verdict:
        """Weigh everything the report found: each reason, most serious first, and the command to run next."""
        return _verdict(self)


def compare(old: Drop, new: Drop, patch_args: tuple[str, ...] = ()) -> UpgradeReport:
    """Compare the series on two drops."""
    series = new.series
    old_files, new_files = _outcomes(old.build), _outcomes(new.build)
    # A context is patched code: compared with the other drop as patched, like with like.
    scopes = _ScopeDiffs(as_patched=old.record is not None or new.record is not None)
    patches = []
    notes: dict[str, list[tuple[str, str]]] = {"OLD": [], "NEW": []}
    for patch in series.patches:
        old_file, old_outcome = old_files.get(patch.id, (None, None))
        new_file, new_outcome = new_files.get(patch.id, (None, None))
        old_read = _as_recorded(old.record, old_file, old_outcome, "OLD", notes["OLD"])
        new_read = _as_recorded(new.record, new_file, new_outcome, "NEW", notes["NEW"])
        patches.append(_compare_patch(patch, old_file, old_read or old_outcome, new_file, new_read or new_outcome,
                                      scopes, old_recorded=old_read is not None, new_recorded=new_read is not None))
    shipping = tuple(_shipping(target, old, new) for target in series.targets)
    before, after = set(_mirror_groups(old.build)), set(_mirror_groups(new.build))
    # A shipped copy that moved keeps its findings: compare them under its new path.
    renamed = {s.old_path: s.new_path for s in shipping
               if s.old_path is not None and s.new_path is not None and s.old_path != s.new_path}
    rules_old, rules_new = _rules_on(old), _rules_on(new)
    new_errors, fixed = _differences(rules_old.errors, rules_new.errors, renamed)
    new_warnings, gone_warnings = _differences(rules_old.warnings, rules_new.warnings, renamed)
    return UpgradeReport(
        old.label, new.label, tuple(patches), shipping,
        tuple(sorted(after - before, key=_group_key)), tuple(sorted(before - after, key=_group_key)),
        new_errors, fixed, new_warnings, gone_warnings, rules_old, rules_new, patch_args,
        _record_use(old, "OLD", patches, notes["OLD"]), _record_use(new, "NEW", patches, notes["NEW"]),
    )


def _as_recorded(record: Record | None, file: FileOutcome | None, outcome: PatchOutcome | None, side: str,
                 notes: list[tuple[str, str]]) -> PatchOutcome | None:
    """Return the outcome the record keeps for a patch found already applied on a context, or None.

    Only for the same patch on the same file with the same parameters, as
    ``apply`` carries a record forward. A patch recorded with other
    parameters is compared as found (already applied, or failing where the
    recorded values do not match the patterns), and a note says why.
    """
    if record is None or file is None or outcome is None:
        return None
    kept = record.patch(outcome.patch.id, file.path)
    if kept is None or kept.status == Status.FAILED.value:
        return None
    values = dict(outcome.patch.values)
    if _canonical(kept.params) != _canonical(values):
        differ = ", ".join(f"{name}={_canonical(kept.params.get(name))}" for name in sorted({*kept.params, *values})
                           if _canonical(kept.params.get(name)) != _canonical(values.get(name)))
        notes.append((f"patch {outcome.patch.id}", f"{side}'s {MANIFEST} records it with other parameters "
                      f"({differ}), so its status on {side} is as found"))
        return None
    if outcome.status is not Status.ALREADY_APPLIED:
        return None
    prints = tuple(StepPrint(step.step, tuple(
        MatchPrint(Print(m.code.sha256, AS_RECORDED), {name: Print(p.sha256, AS_RECORDED) for name, p in m.bindings.items()})
        for m in step.matches)) for step in kept.steps)
    return replace(outcome, status=Status(kept.status), prints=prints)


def _canonical(value: object) -> str:
    # As JSON, the way the manifest holds parameters and apply compares them: 8192 and 8192, NaN and NaN are equal.
    return json.dumps(value, sort_keys=True, default=str)


def _record_use(drop: Drop, side: str, patches: list[PatchComparison],
                notes: list[tuple[str, str]]) -> RecordUse:
    """Say what DROP's manifest contributed to the comparison, or why it was not read."""
    record = drop.record
    if record is None:
        unread = ((drop.label, f"{drop.record_note}; {side} is compared as a tree, its patches as found"),)
        return RecordUse(notes=unread if drop.record_note else ())
    read = tuple(p.patch.id for p in patches if (p.old_recorded if side == "OLD" else p.new_recorded))
    return RecordUse(True, record.origin_name, record.origin_sha256, read, tuple(notes))


def _outcomes(build: "Build") -> dict[str, tuple[FileOutcome, PatchOutcome | None]]:
    found: dict[str, tuple[FileOutcome, PatchOutcome | None]] = {}
    for outcome in build.files:
        by_id = {o.patch.id: o for o in outcome.outcomes}
        for patch in build.patch_set.for_target(_target_of(build, outcome.path)):
            found[patch.id] = (outcome, by_id.get(patch.id))
    return found


def _target_of(build: "Build", path: str) -> str:
    return next(target for target, shipped in build.targets.items() if shipped == path)


def _status(file: FileOutcome | None, outcome: PatchOutcome | None) -> str:
    if file is None:
        return NOT_SHIPPED
    return "fails" if outcome is None else STATUS[outcome.status]


def _diagnostic(file: FileOutcome | None, outcome: PatchOutcome | None) -> str:
    if file is None:
        return ""
    if outcome is None:
        return f"{file.path} does not parse: {file.parse_error}"
    return outcome.message if outcome.status is Status.FAILED else ""


def _compare_patch(patch: Patch, old_file: FileOutcome | None, old: PatchOutcome | None,
                   new_file: FileOutcome | None, new: PatchOutcome | None, scopes: "_ScopeDiffs", *,
                   old_recorded: bool = False, new_recorded: bool = False) -> PatchComparison:
    captures: tuple[CaptureChange, ...] = ()
    if old is not None and new is not None and old.status is new.status is Status.APPLIED:
        captures = tuple(_capture_changes(old, new))
    found = tuple(scopes.get(scope, old_file, new_file) for scope in patch_scopes(patch))
    failure = new if new is not None and new.status is Status.FAILED else None
    return PatchComparison(patch, _status(old_file, old), _status(new_file, new), _diagnostic(new_file, new),
                           _diagnostic(old_file, old), failure, captures, found, old_recorded, new_recorded)


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


class _ScopeDiffs:
    """Judge each (file pair, scope) once, and number the changed ones in the order they are first met.

    Patches of one file often share a scope (the two prefill patches both
    edit ``_forward_prefix_pytorch``): its diff is computed and printed
    once, and each patch refers to it by number.
    """

    def __init__(self, as_patched: bool = False) -> None:
        self._seen: dict[tuple[str, str, str], ScopeChange] = {}
        self._as_patched = as_patched  # compare each file as apply would write it, not as the drop has it

    def get(self, scope: str, old_file: FileOutcome | None, new_file: FileOutcome | None) -> ScopeChange:
        if old_file is None or new_file is None:
            which = [name for name, f in (("OLD", old_file), ("NEW", new_file)) if f is None]
            shipped = new_file or old_file
            verb = "does" if len(which) == 1 else "do"
            return ScopeChange(scope, None, "", f"{' and '.join(which)} {verb} not ship the target",
                               shipped.path if shipped is not None else "")
        key = (old_file.path, new_file.path, scope)
        if key not in self._seen:
            change = scope_change(scope, old_file, new_file, as_patched=self._as_patched)
            number = sum(1 for s in self._seen.values() if s.number) + 1 if change.diff else 0
            self._seen[key] = replace(change, path=new_file.path, number=number)
        return self._seen[key]


def scope_change(scope: str, old_file: FileOutcome, new_file: FileOutcome, *, as_patched: bool = False) -> ScopeChange:
    """Judge whether ``scope`` differs on syntax between the two files; diff its code alone.

    ``as_patched``: compare the files as the series patches them (as far as
    it applies there), the way a context holds its code; the note says so.
    """
    if not as_patched:
        return _scope_change(scope, old_file.path, old_file.original, new_file.path, new_file.original, scope)
    change = _scope_change(scope, old_file.path, old_file.patched, new_file.path, new_file.patched,
                           f"{scope or '(module)'}, {AS_PATCHED}")
    return replace(change, note=f"{AS_PATCHED}; {change.note}" if change.note else AS_PATCHED)


def _scope_change(scope: str, old_path: str, old_source: bytes, new_path: str, new_source: bytes,
                  label: str) -> ScopeChange:
    old_module, new_module = _module(old_source), _module(new_source)
    broken = [name for name, module in (("OLD", old_module), ("NEW", new_module)) if module is None]
    if old_module is None or new_module is None:
        return ScopeChange(scope, True, "", f"{' and '.join(broken)} {'does' if len(broken) == 1 else 'do'} not parse")
    old, new = _scope_source(old_module, scope), _scope_source(new_module, scope)
    if old is None and new is None:
        return ScopeChange(scope, False, "", "missing in OLD and NEW")
    if old is None or new is None:
        which = "OLD" if old is None else "NEW"
        text = _unified(old or ("", "", ()), new or ("", "", ()), old_path, new_path, label)
        return ScopeChange(scope, True, text, f"missing in {which}")
    if old[0] == new[0]:
        return ScopeChange(scope, False, "")
    return ScopeChange(scope, True, _unified(old, new, old_path, new_path, label))


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


def _scope_source(module: tuple[str, ast.Module], scope: str) -> tuple[str, str, tuple[int, ...]] | None:
    """Return (ast dump, LF source text, the file's number of each of its lines) of ``scope``, or None if missing."""
    text, tree = module
    node: ast.AST | None = tree
    for part in filter(None, scope.split(".")):
        node = _definition(node, part) if node is not None else None
    if node is None:
        return None
    lines = text_lines(text)  # as ast numbers them (str.splitlines also breaks at form feeds)
    if node is tree:
        return _own(tree, lines, 1, len(lines))
    assert isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    first = _first_line(node)
    if isinstance(node, ast.ClassDef):
        return _own(node, lines, first, node.end_lineno or first)
    last = node.end_lineno or first
    return ast.dump(node), "".join(lines[first - 1 : last]), tuple(range(first, last + 1))


def _own(node: ast.Module | ast.ClassDef, lines: list[str], first: int, last: int) -> tuple[str, str, tuple[int, ...]]:
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
    return ast.dump(shell), "".join(lines[n - 1] for n in kept), tuple(kept)


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


def _unified(old: tuple[str, str, tuple[int, ...]], new: tuple[str, str, tuple[int, ...]], old_path: str,
             new_path: str, scope: str) -> str:
    # Hunk headers in each file's own line numbers, not the scope's; a class's skipped method bodies split hunks.
    return numbered_diff(text_lines(old[1]), list(old[2]), text_lines(new[1]), list(new[2]),
                         f"a/{old_path} ({scope or '(module)'})", f"b/{new_path} ({scope or '(module)'})")


# --------------------------------------------------------------------------- around the patches


def _shipping(target: str, old: Drop, new: Drop) -> Shipping:
    return Shipping(target, old.build.targets.get(target), new.build.targets.get(target),
                    _installed(old.build, target), _installed(new.build, target),
                    old.unshipped.get(target, ""), new.unshipped.get(target, ""))


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


def _rules_on(drop: Drop) -> RulesOn:
    applied = sum(1 for f in drop.build.files for o in f.outcomes if o.status is not Status.FAILED)
    found = drop.rules
    return RulesOn(_findings(found.errors), _findings(found.warnings), applied, len(drop.series.patches))


def _findings(violations: Iterable[object]) -> tuple[RuleError, ...]:
    return tuple(RuleError(v.rule, v.path, v.line, v.message) for v in violations)  # type: ignore[attr-defined]


def _differences(old: tuple[RuleError, ...], new: tuple[RuleError, ...],
                 renamed: Mapping[str, str]) -> tuple[tuple[RuleError, ...], tuple[RuleError, ...]]:
    """Return the findings only NEW has, and those only OLD had, matched by rule, file and message."""
    old_keys = {_finding_key(e, renamed) for e in old}
    new_keys = {_finding_key(e) for e in new}
    return (tuple(e for e in new if _finding_key(e) not in old_keys),
            tuple(e for e in old if _finding_key(e, renamed) not in new_keys))


def _finding_key(error: RuleError, renamed: Mapping[str, str] | None = None) -> tuple[str, str, str]:
    renamed = renamed or {}
    message = error.message
    for before, after in renamed.items():  # a warning about an install line names the copied file
        message = message.replace(before, after)
    return error.rule, renamed.get(error.path, error.path), message


# --------------------------------------------------------------------------- the verdict


def _verdict(report: UpgradeReport) -> Verdict:
    """Collect every reason the upgrade is not a plain 'apply NEW', with the command that deals with the worst."""
    steps: list[tuple[Reason, str]] = []  # each reason, and what to run about it
    new = _shell(report.new)
    rerun = " ".join([new, *map(_shell, report.patch_args)])
    # inspect and verify-sync take no patch options, but the stage NEW was read as (the leading --target STAGE).
    if report.patch_args[:1] == ("--target",):
        new = " ".join([new, *map(_shell, report.patch_args[:2])])
    for s in report.shipping:
        if s.new_path is None:
            steps.append((Reason(Severity.BROKEN, s.target, f"NEW ships no single file as it: {s.new_problem}"),
                          f"patcher inspect {new}"))
    for p in report.patches:
        subject = f"patch {p.patch.id}"
        if p.new == "fails":
            was = "" if p.old == "fails" else f" (it {_said(p.old)} on OLD)"
            detail = p.failure.detail if p.failure is not None else p.diagnostic
            steps.append((Reason(Severity.BROKEN, subject, f"fails on NEW{was}: {detail}"),
                          f"patcher diff --keep-going {rerun}"))
        elif p.new == NOT_SHIPPED:
            continue  # said once, for the target
        elif p.old != p.new:
            steps.append((Reason(Severity.REVIEW, subject, f"{_said(p.new)} on NEW, {_said(p.old)} on OLD"),
                          f"patcher explain {p.patch.id} --in {rerun}"))
        if p.captures:
            changed = ", ".join(dict.fromkeys(f"step {c.step} {c.binding}" for c in p.captures))
            steps.append((Reason(Severity.REVIEW, subject, f"applies, but what it captured changed: {changed}"),
                          _update(p.patch)))
    for scope in report.scope_diffs:
        users = [p.patch for p in report.patches if scope in p.scopes]
        names = ", ".join(u.id for u in users)
        what = f"changed ({scope.note})" if scope.note else "changed"
        steps.append((Reason(Severity.REVIEW, f"scope {scope.scope or '(module)'}",
                             f"{what}: see diff {scope.number}; relied on by {names}"), _update(users[0])))
    built = report.rules_new.built()
    targets = {s.new_path: s.target for s in report.shipping if s.new_path is not None}
    for e in report.rules_new.errors:
        fresh = "" if e in report.new_errors else " (OLD too)"
        # A patch names the file by where the image runs it; for another file that is for the author to say.
        target = targets.get(e.path, f"TARGET (where the image runs {e.path})")
        steps.append((Reason(Severity.UNSAFE, f"{e.path}:{e.line}",
                             f"{e.rule}: {e.message}; in NEW, {built}{fresh}"),
                      f"patch it out: patcher new ID --target {target}, then patcher test ID"))
    for s in report.shipping:
        if s.moved:
            steps.append((Reason(Severity.REVIEW, s.target, f"shipped copy moved: {_moved(s)}"),
                          f"patcher inspect {new}"))
    for g in report.mirrors_appeared:
        steps.append((Reason(Severity.REVIEW, g.shipped, f"mirror group appeared: {', '.join(g.mirrors)}"),
                      f"patcher verify-sync {new}"))
    for g in report.mirrors_went:
        steps.append((Reason(Severity.REVIEW, g.shipped, f"mirror group went: {', '.join(g.mirrors)}"),
                      f"patcher verify-sync {new}"))
    for e in report.new_warnings:
        steps.append((Reason(Severity.REVIEW, f"{e.path}:{e.line}", f"{e.rule}: {e.message}; new in NEW"),
                      f"patcher check {new}"))
    for e in report.fixed:
        steps.append((Reason(Severity.NOTE, f"{e.path}:{e.line}", f"{e.rule}: {e.message}; gone from NEW"), ""))
    for e in report.gone_warnings:
        steps.append((Reason(Severity.NOTE, f"{e.path}:{e.line}", f"{e.rule}: {e.message}; gone from NEW"), ""))
    for subject, text in (*report.old_record.notes, *report.new_record.notes):
        steps.append((Reason(Severity.NOTE, subject, text), ""))
    statuses = tuple((p.patch.id, f"{p.old} -> {p.new}") for p in report.patches)
    verdict = Verdict("upgrade", statuses, tuple(reason for reason, _ in steps))
    worst = next((todo for reason, todo in sorted(steps, key=lambda s: -s[0].severity) if todo), "")
    if verdict.exit_code is ExitCode.OK:
        worst = f"patcher apply {rerun}"
    return replace(verdict, next=worst)


def _said(status: str) -> str:
    return {"applies": "applies", "already-applied": "is already applied", "fails": "fails",
            NOT_SHIPPED: "is not shipped"}.get(status, status)


def _moved(s: Shipping) -> str:
    installs = f"{', '.join(map(installed_text, s.old_installed)) or 'nothing'} -> " \
               f"{', '.join(map(installed_text, s.new_installed)) or 'nothing'}"
    if s.old_path == s.new_path:
        return f"{s.new_path} is installed elsewhere: {installs}"
    return f"{s.old_path} -> {s.new_path}; installed as {installs}"


def _update(patch: Patch) -> str:
    return f"update {_shown(patch.path)} if it must follow the change, then patcher test {patch.id}"


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _shell(text: str) -> str:
    import shlex

    return shlex.quote(text)
