"""What ``patcher test`` checks, one case a line; every run returns a value.

For each patch: each example in LF and CRLF (``before`` gives exactly
``after``; an ``error`` example fails with that message and leaves the code
as it was, the text matched against the whole message, closest code
included; an example with neither must report "already applied" and change
nothing). For each example with an ``after``: the patch recognises its own
result, and applying it a second time to what it produced changes nothing.
A patch without examples fails: "example not written yet". For each safety
rule the set's policy declares: its VALID/INVALID examples, judged by
``patcher.checks.examples.judge_example`` as the checks' own tests judge
them (a VALID one draws no violation and exactly its ``note``; an INVALID
one is reported at its ``path`` and line, with its text). For each target
file that more than one patch edits: each example of those patches (but
the ``error`` ones) run through all of them in series order, after which
every patch still present must be recognised by its applied-when markers,
so that re-applying the series to its own output changes nothing (the
runner's ``run_series`` check; a failure names the later patch).

The project's own pytest suite (tests/patchset/test_shipped_examples.py) runs these
same cases, so there is one implementation of what an example means.
"""

from __future__ import annotations

import difflib
import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..errors import PatcherError, PatchSetError
from ..patchset import Example, Patch, PatchSet
from ..patchset.runner import FileOutcome, Status, patch_source, run_series
from ..report import ExitCode, Reason, Severity, Verdict
from .series_file import load_with

if TYPE_CHECKING:
    from ..checks import Policy
    from ..checks.base import Invalid, Valid

NEWLINES = (("LF", "\n"), ("CRLF", "\r\n"))
EXAMPLE_PATH = "example.py"
NOT_WRITTEN = "example not written yet"


class Check(str, enum.Enum):
    """What a case checks."""

    EXAMPLE = "example"
    RECOGNISED = "recognises its own result"
    TWICE = "applying twice changes nothing"
    NOT_WRITTEN = "has an example"
    SERIES = "every marker holds after the series"
    RULE_VALID = "VALID"
    RULE_INVALID = "INVALID"


@dataclass(frozen=True)
class Case:
    """One check of a patch or a safety rule; ``label`` is what its report line shows."""

    subject: str  # the patch id, or "rule ID"
    name: str  # the example's name, or "VALID 2" for a rule example
    check: Check
    variant: str = ""  # "LF" or "CRLF" for patch examples
    patch: Patch | None = None  # rendered with the example's params
    example: Example | None = None
    rule: str | None = None
    rule_example: "Valid | Invalid | None" = None
    problem: str | None = None  # why the case cannot even run (bad example params)
    series: tuple[Patch, ...] = ()  # for a series case: the patches of the target, in order

    @property
    def label(self) -> str:
        """Say ``subject: name [check, variant]`` in one line."""
        shown = self.check.value if self.check in (Check.RECOGNISED, Check.TWICE, Check.SERIES) else ""
        detail = ", ".join(part for part in (shown, self.variant) if part)
        return f"{self.subject}: {self.name}" + (f" [{detail}]" if detail else "")


@dataclass(frozen=True)
class CaseResult:
    """How one case went: ``message`` says why it failed, ``diff`` shows expected against got."""

    case: Case
    passed: bool
    message: str = ""
    diff: str = ""


@dataclass(frozen=True)
class TestReport:
    """Every case of a ``patcher test`` run, and the exit code they add up to."""

    __test__ = False  # not a pytest test class, whatever its name

    directory: str
    results: tuple[CaseResult, ...]
    inactive: tuple[str, ...] = ()  # inactive patches of the series this run did not test

    @property
    def passed(self) -> int:
        """Count the cases that passed."""
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        """Count the cases that failed."""
        return len(self.results) - self.passed

    @property
    def verdict(self) -> Verdict:
        """Each case ok or FAIL; a failing case is a reason (``report.Verdict`` turns it into the exit code)."""
        statuses = tuple((r.case.label, "ok" if r.passed else "FAIL") for r in self.results)
        reasons = tuple(Reason(Severity.BROKEN, r.case.label, r.message) for r in self.results if not r.passed)
        return Verdict("test", statuses, reasons)

    @property
    def exit_code(self) -> ExitCode:
        """Return 0 when every case passed, 1 when one failed."""
        return self.verdict.exit_code

    def summary(self) -> str:
        """Say ``N passed, M failed``."""
        return f"{self.passed} passed, {self.failed} failed"

    def lines(self) -> Iterator[str]:
        """Yield one ``ok``/``FAIL`` line per case; a failure adds its reason and diff, indented."""
        for result in self.results:
            if result.passed:
                yield f"ok    {result.case.label}"
                continue
            yield f"FAIL  {result.case.label}: {result.message}"
            for line in result.diff.splitlines():
                yield f"    {line}"

    def to_json(self) -> str:
        """Render the report as JSON: the counts and one object per case."""
        cases = [
            {
                "subject": r.case.subject,
                "name": r.case.name,
                "check": r.case.check.value,
                "variant": r.case.variant,
                "passed": r.passed,
                "message": r.message,
                "diff": r.diff,
            }
            for r in self.results
        ]
        data = {"patches": self.directory, "passed": self.passed, "failed": self.failed, "cases": cases,
                "inactive": list(self.inactive)}
        return json.dumps(data, indent=2)


# --------------------------------------------------------------------------- choosing


def select_patches(patch_set: PatchSet, ids: Sequence[str]) -> tuple[Patch, ...]:
    """Return the patches named by ``ids`` in series order (all of them when none is named)."""
    if not ids:
        return patch_set.patches
    known = [p.id for p in patch_set.patches]
    for wanted in ids:
        if wanted not in known:
            close = difflib.get_close_matches(wanted, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"the series has: {', '.join(known)}"
            raise PatcherError(f"no patch '{wanted}' in the series", where=str(patch_set.directory / "series"),
                               hint=hint)
    return tuple(p for p in patch_set.patches if p.id in ids)


# --------------------------------------------------------------------------- collecting


def patch_cases(patch_set: PatchSet, patches: Iterable[Patch]) -> list[Case]:
    """List the cases of each patch's examples, in series and file order."""
    cases: list[Case] = []
    for patch in patches:
        if not any(e.before.strip() for e in patch.examples):
            cases.append(Case(patch.id, "examples", Check.NOT_WRITTEN, patch=patch))
            continue
        for example in patch.examples:
            rendered, problem = _with_params(patch_set, patch, example)
            for variant, _ in NEWLINES:
                cases.append(Case(patch.id, example.name, Check.EXAMPLE, variant, rendered, example, problem=problem))
            if example.after is None:
                continue
            for check in (Check.RECOGNISED, Check.TWICE):
                for variant, _ in NEWLINES:
                    cases.append(Case(patch.id, example.name, check, variant, rendered, example, problem=problem))
    return cases


def rule_cases(policy: "Policy") -> list[Case]:
    """List the cases of the VALID and INVALID examples of each rule ``policy`` declares."""
    from ..checks import RULES

    cases = []
    for rule_id in policy.rules:
        rule = RULES[rule_id]
        examples: tuple[tuple[Check, Sequence[Valid | Invalid]], ...] = (
            (Check.RULE_VALID, rule.VALID), (Check.RULE_INVALID, rule.INVALID))
        for check, listed in examples:
            for number, example in enumerate(listed, 1):
                cases.append(Case(f"rule {rule_id}", f"{check.value} {number}", check, rule=rule_id,
                                  rule_example=example))
    return cases


def series_cases(patch_set: PatchSet, patches: Iterable[Patch]) -> list[Case]:
    """List the series cases of the targets of ``patches``: each example of a target's patches, through all of them.

    Only targets that more than one patch edits: with one patch the
    RECOGNISED case already checks its markers on its own result. An
    ``error`` example is left out (its patch must not apply there).
    """
    cases: list[Case] = []
    for target in dict.fromkeys(p.target for p in patches):
        series = patch_set.for_target(target)
        if len(series) < 2:
            continue
        for patch in series:
            for example in patch.examples:
                if example.error is not None or not example.before.strip():
                    continue
                chained, problem = _series_with_params(patch_set, patch, example)
                cases.append(Case("series", f"{patch.id}: {example.name}", Check.SERIES, "", patch, example,
                                  problem=problem, series=chained))
    return cases


def collect_cases(patch_set: PatchSet, ids: Sequence[str] = (), *, rules: bool = True) -> list[Case]:
    """List every case ``patcher test`` runs for ``patch_set``; rule cases only when no patch is named.

    The series cases cover the targets of the patches named (of all of
    them when none is).
    """
    selected = select_patches(patch_set, ids)
    cases = patch_cases(patch_set, selected)
    cases.extend(series_cases(patch_set, selected))
    if rules and not ids:
        from ..checks import load_policy, policy_path

        cases.extend(rule_cases(load_policy(policy_path(patch_set.directory))))
    return cases


def _with_params(patch_set: PatchSet, patch: Patch, example: Example) -> tuple[Patch, str | None]:
    # An example may set the patch's parameters: render the patch again with them.
    reloaded, problem = _reloaded(patch_set, patch, example)
    return next(p for p in reloaded.patches if p.id == patch.id), problem


def _series_with_params(patch_set: PatchSet, patch: Patch, example: Example) -> tuple[tuple[Patch, ...], str | None]:
    # The other patches of the target keep their defaults; the example's own patch takes its params.
    reloaded, problem = _reloaded(patch_set, patch, example)
    return reloaded.for_target(patch.target), problem


def _reloaded(patch_set: PatchSet, patch: Patch, example: Example) -> tuple[PatchSet, str | None]:
    """Load the set again with the example's params set on its patch (the same set when it has none)."""
    if not example.params:
        return patch_set, None
    overrides = [f"{patch.id}.{name}={value}" for name, value in example.params.items()]
    try:
        # The same patches as ``patch_set``: an inactive patch under test is loaded again too.
        reloaded = load_with(patch_set.directory, include=[p.id for p in patch_set.patches], overrides=overrides)
    except PatchSetError as error:
        return patch_set, f"the example's params do not load: {error}"
    return reloaded, None


# --------------------------------------------------------------------------- running


def run_cases(directory: Path, cases: Iterable[Case], inactive: Sequence[str] = ()) -> TestReport:
    """Run every case and gather the results; ``inactive``: the inactive patches left out of this run."""
    return TestReport(str(directory), tuple(run_case(case) for case in cases), tuple(inactive))


def run_case(case: Case) -> CaseResult:
    """Run one case; a failure is a result, never an exception."""
    if case.problem is not None:
        return CaseResult(case, False, case.problem)
    if case.check is Check.NOT_WRITTEN:
        assert case.patch is not None
        return CaseResult(case, False, f"patch {case.patch.id}: {NOT_WRITTEN} (add an [[examples]] table with "
                                       f"'before' and 'after' or 'error' to {case.patch.path.name})")
    if case.check in (Check.RULE_VALID, Check.RULE_INVALID):
        return _run_rule_example(case)
    assert case.patch is not None and case.example is not None
    if case.check is Check.SERIES:
        return _run_series(case, case.series, case.example)
    newline = dict(NEWLINES)[case.variant]
    if case.check is Check.EXAMPLE:
        return _run_example(case, case.patch, case.example, newline)
    if case.check is Check.RECOGNISED:
        assert case.example.after is not None
        return _run_unchanged(case, case.patch, _encode(case.example.after, newline), "its own 'after'")
    first = patch_source(EXAMPLE_PATH, _encode(case.example.before, newline), [case.patch])
    if _status(first) is not Status.APPLIED:
        return CaseResult(case, False, f"the first run did not apply: {_said(first)}")
    return _run_unchanged(case, case.patch, first.patched, "what it produced")


def _run_example(case: Case, patch: Patch, example: Example, newline: str) -> CaseResult:
    before = _encode(example.before, newline)
    result = patch_source(EXAMPLE_PATH, before, [patch])
    if result.parse_error is not None:
        return CaseResult(case, False, f"'before' does not parse: {result.parse_error}")
    # The whole message: what failed and, when a pattern found nothing, the closest code.
    status, message = _status(result), result.outcomes[0].message
    if example.error is not None:
        if status is Status.FAILED and example.error in message and result.patched == before:
            return CaseResult(case, True)
        expected = f"fails with: ...{example.error}..."
        got = f"fails with: {message}" if status is Status.FAILED else status.value
        return CaseResult(case, False, f"expected an error containing {example.error!r}, got {_said(result)}",
                          _diff(expected, got))
    if example.after is not None:
        expected_bytes = _encode(example.after, newline)
        if status is Status.APPLIED and result.patched == expected_bytes:
            return CaseResult(case, True)
        why = "the result differs from 'after'" if status is Status.APPLIED else f"the patch {_said(result)}"
        return CaseResult(case, False, why, _diff_bytes(expected_bytes, result.patched))
    if status is Status.ALREADY_APPLIED and result.patched == before:
        return CaseResult(case, True)
    return CaseResult(case, False, f"expected 'already applied' and no change (the example has no 'after' "
                                   f"or 'error'), got {_said(result)}", _diff_bytes(before, result.patched))


def _run_unchanged(case: Case, patch: Patch, source: bytes, what: str) -> CaseResult:
    result = patch_source(EXAMPLE_PATH, source, [patch])
    if _status(result) is Status.ALREADY_APPLIED and result.patched == source:
        return CaseResult(case, True)
    return CaseResult(case, False, f"on {what} the patch should report 'already applied' and change nothing, "
                                   f"got {_said(result)}", _diff_bytes(source, result.patched))


def _run_series(case: Case, series: Sequence[Patch], example: Example) -> CaseResult:
    """Run the target's whole series on the example; every patch still present must hold its markers at the end.

    The other patches may well not apply to this example (their scope is
    elsewhere): that is their own examples' business, not this case's.
    """
    run = run_series(EXAMPLE_PATH, _encode(example.before, "\n"), series)
    if run.file.parse_error is not None:
        return CaseResult(case, False, f"'before' does not parse: {run.file.parse_error}")
    if not run.breaks:
        return CaseResult(case, True)
    said = "; ".join(f"patch {b.breaker.id}: {b.detail}" for b in run.breaks)
    return CaseResult(case, False, said)


def _run_rule_example(case: Case) -> CaseResult:
    from ..checks import RULES
    from ..checks.examples import judge_example

    assert case.rule is not None and case.rule_example is not None
    verdict = judge_example(RULES[case.rule], case.rule_example)
    if verdict.passed:
        return CaseResult(case, True)
    return CaseResult(case, False, verdict.problem, _diff(verdict.expected, verdict.got))


# --------------------------------------------------------------------------- helpers


def _encode(text: str, newline: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", newline).encode("utf-8")


def _status(result: FileOutcome) -> Status:
    return result.outcomes[0].status if result.outcomes else Status.FAILED


def _said(result: FileOutcome) -> str:
    """Say what the patch reported, in a few words."""
    if result.parse_error is not None:
        return f"a parse error: {result.parse_error}"
    outcome = result.outcomes[0]
    if outcome.status is Status.FAILED:
        return f"failed: {outcome.message}"
    changed = "changed the code" if result.changed else "changed nothing"
    return f"{outcome.status.value} ({changed})"


def _diff(expected: str, got: str) -> str:
    lines = difflib.unified_diff(expected.splitlines(), got.splitlines(), "expected", "got", lineterm="")
    return "\n".join(lines)


def _diff_bytes(expected: bytes, got: bytes) -> str:
    """Diff two versions of the code (unified); show line endings when they alone differ."""
    want, have = expected.decode("utf-8", "replace"), got.decode("utf-8", "replace")
    if want.splitlines() == have.splitlines() and want != have:
        return _diff(_show_endings(want), _show_endings(have))
    return _diff(want, have)


def _show_endings(text: str) -> str:
    # Make a CRLF/LF difference visible in a diff that otherwise shows none.
    shown = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        shown.append(body + line[len(body):].replace("\r", "\\r").replace("\n", "\\n"))
    return "\n".join(shown)
