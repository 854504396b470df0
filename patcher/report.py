"""Count outcomes and turn them into report lines and the exit code, in one place."""

from __future__ import annotations

import enum
import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from .patchset.model import Patch
    from .patchset.outcome import FileOutcome
    from .records import Diagnostic
    from .checks import CheckResult, Violation
    from .pipeline import Build


class ExitCode(enum.IntEnum):
    """The exit codes of every command; ``--help`` documents them."""

    OK = 0
    DIFFERENCE = 1  # a check found a difference (drift, a non-empty diff, a safety rule error)
    BAD_INPUT = 2  # bad input or usage, a patch that does not apply, or (apply) a safety rule error; nothing written
    INTERNAL = 3  # a bug in patcher
    INTERRUPTED = 130  # Ctrl-C or SIGTERM; nothing written


EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 a check found a difference; 2 bad input or usage, "
    "a patch does not apply, or a safety rule error (nothing is written); 3 internal error."
)


class Severity(enum.IntEnum):
    """How serious one reason of a verdict is, least serious first."""

    NOTE = 0  # worth saying; never fails a run (a rule's note, an error the new drop fixed)
    WARNING = 1  # a rule warning: printed, never failing
    REVIEW = 2  # a difference someone must look at before it ships (a scope or capture that changed)
    UNSAFE = 3  # a safety-rule error in what would ship
    BROKEN = 4  # it does not work: a patch that does not apply, a target not shipped, a failing case


# The one place a verdict becomes an exit code: per command, the code each
# severity gives (a severity not listed gives 0). The worst reason decides.
VERDICT_EXIT_CODES: Mapping[str, Mapping[Severity, ExitCode]] = {
    "apply": {Severity.BROKEN: ExitCode.BAD_INPUT, Severity.UNSAFE: ExitCode.BAD_INPUT},
    "check": {Severity.BROKEN: ExitCode.DIFFERENCE, Severity.UNSAFE: ExitCode.DIFFERENCE},
    "test": {Severity.BROKEN: ExitCode.DIFFERENCE},
    # A CI gate on a new drop: anything short of "ships as before" needs a person.
    "upgrade": {Severity.BROKEN: ExitCode.DIFFERENCE, Severity.UNSAFE: ExitCode.DIFFERENCE,
                Severity.REVIEW: ExitCode.DIFFERENCE},
}


@dataclass(frozen=True)
class Reason:
    """One thing a verdict rests on: how serious, about what, and what was found."""

    severity: Severity
    subject: str  # a patch id, a file, a target, "rules"
    text: str

    def line(self) -> str:
        """``SEVERITY subject: text``, on one line."""
        return f"{self.severity.name.lower()}: {self.subject}: {self.text}"

    def to_json(self) -> dict[str, str]:
        """Give the same as plain data."""
        return {"severity": self.severity.name.lower(), "subject": self.subject, "text": self.text}


@dataclass(frozen=True)
class Verdict:
    """What a command concluded: a status per subject, its reasons (most serious first), what to run next.

    ``apply``, ``check``, ``test`` and ``upgrade`` build one; its exit code
    comes from ``VERDICT_EXIT_CODES`` and nowhere else.
    """

    command: str
    statuses: tuple[tuple[str, str], ...]  # (subject, status) in the command's own order
    reasons: tuple[Reason, ...]
    next: str = ""  # the command to run next, "" when there is nothing to do

    def __post_init__(self) -> None:
        if self.command not in VERDICT_EXIT_CODES:
            raise ValueError(f"no exit codes for command {self.command!r}")
        # Most serious first; equal ones keep the order the command found them in.
        ordered = tuple(sorted(self.reasons, key=lambda r: -r.severity))
        object.__setattr__(self, "reasons", ordered)

    @property
    def worst(self) -> Severity | None:
        """The most serious reason's severity, or None when there is no reason at all."""
        return self.reasons[0].severity if self.reasons else None

    @property
    def exit_code(self) -> ExitCode:
        """The exit code of the most serious reason, under this command's table."""
        table = VERDICT_EXIT_CODES[self.command]
        return max((table.get(r.severity, ExitCode.OK) for r in self.reasons), default=ExitCode.OK)

    @property
    def failing(self) -> tuple[Reason, ...]:
        """The reasons that make the exit code what it is (not 0), most serious first."""
        table = VERDICT_EXIT_CODES[self.command]
        return tuple(r for r in self.reasons if table.get(r.severity, ExitCode.OK) is not ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        """Give the verdict as plain data."""
        return {"exit_code": int(self.exit_code), "passed": self.exit_code is ExitCode.OK,
                "statuses": [{"subject": s, "status": status} for s, status in self.statuses],
                "reasons": [r.to_json() for r in self.reasons], "next": self.next}

def stale_hint(input_name: str | None, patch_args: tuple[str, ...] = ()) -> str:
    """Say what to run next when a patch does not apply: a command that works on that very input.

    ``patch_args`` are the run's own ``--patches``/``--set`` options, so the
    command sees the same patch set and parameters.
    """
    where = " ".join(_quote(a) for a in (input_name or "VENDOR", *patch_args))
    return (f"see what the other patches still change with 'patcher diff --keep-going {where}', "
            f"then update the patch in the patch set")


def patch_arguments(patches_dir: object | None, overrides: tuple[str, ...], stage: str | None = None) -> tuple[str, ...]:
    """Repeat the ``--target STAGE --patches DIR --set X=Y ...`` a command was given, for a hint."""
    target: tuple[str, ...] = ("--target", stage) if stage is not None else ()
    patches = ("--patches", str(patches_dir)) if patches_dir is not None else ()
    return target + patches + tuple(a for o in overrides for a in ("--set", o))


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@dataclass(frozen=True)
class ApplyReport:
    """What ``apply`` tells the user: per patch and file, the mirrors, the output."""

    build: "Build"
    output: str | None = None
    sha256: str | None = None
    checks: "CheckResult | None" = None  # the safety rules: on what would be written, or on the input when a patch failed
    input_name: str | None = None  # the VENDOR argument, for hints that name a command to run
    patch_args: tuple[str, ...] = ()  # the run's --patches/--set, repeated in those hints

    @property
    def counts(self) -> Counter[str]:
        """How many patches ended in each status; every patch on a target that does not parse failed."""
        counts = Counter(o.status.value for f in self.build.files for o in f.outcomes)
        counts["failed"] += sum(len(patches) for patches in unparsed_patches(self.build).values())
        return counts

    @property
    def verdict(self) -> Verdict:
        """Each patch's status, and why the run stops: patches that fail, then rule errors, warnings, notes."""
        statuses = tuple((o.patch.id, o.status.value) for f in self.build.files for o in f.outcomes)
        reasons = []
        for outcome in self.build.files:
            if outcome.parse_error:
                reasons.append(Reason(Severity.BROKEN, outcome.path, f"does not parse: {outcome.parse_error}"))
            reasons.extend(Reason(Severity.BROKEN, f"patch {result.patch.id}", result.message)
                           for result in outcome.outcomes if result.status.value == "failed")
        if self.checks is not None:
            reasons.extend(rule_reasons(self.checks))
        rerun = " ".join(_quote(a) for a in (self.input_name or "VENDOR", *self.patch_args))
        return Verdict("apply", statuses, tuple(reasons),
                       f"patcher diff --keep-going {rerun}" if self.build.failed else "")

    @property
    def exit_code(self) -> ExitCode:
        """2 when anything failed or a safety rule error stands, else 0 (see ``Verdict``)."""
        return self.verdict.exit_code

    def errors(self) -> list[str]:
        """One actionable line per failure."""
        lines = []
        for outcome in self.build.files:
            if outcome.parse_error:
                # Decoding and line-ending errors say what to do already; a syntax error does not.
                hint = f" ({unparsed_hint(self.input_name)})" if "parse" in outcome.parse_error else ""
                lines.append(f"{outcome.path}: does not parse: {outcome.parse_error}{hint}")
            for result in outcome.outcomes:
                if result.status.value == "failed":
                    lines.append(f"{outcome.path}: patch {result.patch.id}: {result.message} "
                                 f"({stale_hint(self.input_name, self.patch_args)})")
        if self.checks is not None:
            lines.extend(violation_line(v, self.checks) for v in self.checks.errors)
        return lines

    def lines(self) -> list[str]:
        """The human report, for stderr."""
        out = []
        unparsed = unparsed_patches(self.build)
        for outcome in self.build.files:
            out.append(f"{outcome.path}")
            for result in outcome.outcomes:
                out.append(f"  {result.status.value:<16} {result.patch.id:<22} {result.patch.summary}")
            for patch in unparsed.get(outcome.path, ()):
                out.append(f"  {'failed':<16} {patch.id:<22} (not run: {_why_unpatchable(outcome)})")
        for mirror in () if self.build.failed else self.build.mirrors:
            if mirror.differed:
                how = "differed only in line endings" if mirror.line_endings_only else "differed"
                out.append(f"mirror {mirror.path}: {how} from {mirror.shipped}; now identical to it")
            else:
                out.append(f"mirror {mirror.path}: identical to {mirror.shipped}")
        if self.build.manifest_ignored and not self.build.failed:
            out.append("the Dockerfile copies the context root: added patcher-manifest.json to .dockerignore "
                       "so the manifest stays out of the image")
        counts = self.counts
        summary = (f"{counts['applied']} applied, {counts['already applied']} already applied, "
                   f"{counts['failed']} failed")
        if not self.build.failed:
            summary += f"; {sum(m.differed for m in self.build.mirrors)} mirror(s) re-synced"
        out.append(summary)
        if self.checks is not None:
            out.extend(f"warning: {violation_line(v, self.checks)}" for v in self.checks.warnings)
            out.extend(f"allowed: {violation_line(v, self.checks)}" for v in self.checks.overridden)
            # What a rule skipped because it cannot run: said as 'check' says it, never failing.
            out.extend(f"note: {note_line(v)}" for v in self.checks.notes)
            for rule, reason in self.build.allowed:
                out.append(f"override --allow {rule}: {reason} (recorded in the manifest)")
        if self.output is not None:
            out.append(f"wrote {self.output}")
            out.append(f"sha256 {self.sha256}")
        elif self.build.failed and self.checks is not None and self.checks.errors:
            out.append(f"nothing written: {counts['failed']} patch failure(s) and "
                       f"{len(self.checks.errors)} safety rule error(s) in the input as it is")
        elif self.checks is not None and self.checks.errors:
            out.append(f"nothing written: {len(self.checks.errors)} safety rule error(s) "
                       f"(to ship anyway, rerun with --allow RULE --reason \"why\")")
        elif self.build.failed:
            out.append("nothing written")
        return out


def unparsed_patches(build: "Build") -> dict[str, tuple["Patch", ...]]:
    """The patches of each target that does not parse (so none of them could run), by shipped path."""
    return {path: build.patch_set.for_target(target) for target, path in build.targets.items()
            if any(f.path == path and f.parse_error for f in build.files)}


def unparsed_hint(input_name: str | None) -> str:
    """Say what to do about a target that does not parse: a command that shows it, on that very input."""
    return (f"the drop itself is broken there: fix that line or ask the vendor for another drop; "
            f"'patcher check {_quote(input_name or 'VENDOR')}' lists every shipped file that does not parse")


def _why_unpatchable(outcome: "FileOutcome") -> str:
    """Say in a few words why no patch ran on a file, with the line when the error names one."""
    import re

    error = outcome.parse_error or ""
    what = ("the file cannot be decoded" if error.startswith("cannot be decoded") else
            "the file would not round-trip byte for byte" if error.startswith("would not round-trip") else
            "the file does not parse")
    found = re.search(r"\bline \d+", error)
    return f"{what}, {found.group()}" if found else what


@dataclass(frozen=True)
class Failure:
    """A patch that did not apply to one file (or a file that did not parse), with where it came closest."""

    path: str
    patch: str | None  # None: the file itself did not parse
    detail: str
    diagnostic: "Diagnostic | None" = None

    def line(self) -> str:
        """``path: patch id: what failed; closest: ...``, on one line."""
        if self.patch is None:
            return f"{self.path}: does not parse: {self.detail}"
        closest = f"; {self.diagnostic.describe()}" if self.diagnostic is not None else ""
        return f"{self.path}: patch {self.patch}: {self.detail}{closest}"

    def to_json(self) -> dict[str, Any]:
        """Give the same as plain data: the diagnostic's fields, not only its text."""
        return {"path": self.path, "patch": self.patch, "detail": self.detail, "message": self.line(),
                "diagnostic": None if self.diagnostic is None else self.diagnostic.to_json()}


def failed_patches(build: "Build") -> list[Failure]:
    """Collect every patch of a build that failed, and every target that did not parse, in series order."""
    failures = []
    for outcome in build.files:
        if outcome.parse_error:
            failures.append(Failure(outcome.path, None, outcome.parse_error))
        for result in outcome.outcomes:
            if result.status.value == "failed":
                failures.append(Failure(outcome.path, result.patch.id, result.detail, result.diagnostic))
    return failures


def violation_line(violation: "Violation", result: "CheckResult") -> str:
    """``path:line: rule: what was found (why: the policy's reason)``, on one line."""
    where = f"{violation.path}:{violation.line}" if violation.line else violation.path
    why = result.policy.reason(violation.rule)
    allowed = result.allowed.get(violation.rule) if result.is_allowed(violation) else None
    tail = f"; allowed: {allowed}" if allowed else ""
    return f"{where}: {violation.rule}: {violation.message} (why: {why}{tail})"


def rule_reasons(result: "CheckResult") -> list[Reason]:
    """Turn what the rules found into reasons: errors unsafe, warnings and notes as they are."""
    reasons = [Reason(Severity.UNSAFE, _where(v), f"{v.rule}: {v.message}") for v in result.errors]
    reasons += [Reason(Severity.WARNING, _where(v), f"{v.rule}: {v.message}") for v in result.warnings]
    reasons += [Reason(Severity.NOTE, _where(v), f"{v.rule}: {v.message}") for v in result.notes]
    return reasons


def _where(violation: "Violation") -> str:
    return f"{violation.path}:{violation.line}" if violation.line else violation.path


def note_line(note: "Violation") -> str:
    """``path:line: rule: what the rule notes``: a note is not a violation, so no reason follows."""
    where = f"{note.path}:{note.line}" if note.line else note.path
    return f"{where}: {note.rule}: {note.message}"


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` prints: one line per violation on stdout, a summary on stderr, the exit code."""

    result: "CheckResult"
    label: str

    @property
    def verdict(self) -> Verdict:
        """Each checked file passes or fails; the errors, warnings and notes are the reasons."""
        failing = {v.path for v in self.result.errors}
        statuses = tuple((path, "fails" if path in failing else "passes") for path in self.result.checked)
        return Verdict("check", statuses, tuple(rule_reasons(self.result)))

    @property
    def exit_code(self) -> ExitCode:
        """1 when an error violation stands (no override covers it), else 0: warnings do not fail."""
        return self.verdict.exit_code

    def lines(self) -> list[str]:
        """One line per violation, errors and warnings first, then those an override allows."""
        result = self.result
        out = [f"error: {violation_line(v, result)}" for v in result.errors]
        out += [f"warning: {violation_line(v, result)}" for v in result.warnings]
        out += [f"allowed: {violation_line(v, result)}" for v in result.overridden]
        out += [f"note: {note_line(v)}" for v in result.notes]
        return out

    def summary(self) -> str:
        """One line for stderr."""
        result = self.result
        verdict = "fails" if result.errors else "passes"
        notes = f", {len(result.notes)} note(s)" if result.notes else ""
        return (f"{self.label}: {verdict}: {len(result.errors)} error(s), {len(result.warnings)} warning(s), "
                f"{len(result.overridden)} allowed{notes}, in {len(result.checked)} Python file(s) checked")

    def to_json(self) -> str:
        """The same, for machines."""
        result = self.result
        violations = [
            {"rule": v.rule, "severity": v.severity.value, "path": v.path, "line": v.line,
             "message": v.message, "reason": result.policy.reason(v.rule),
             "allowed": result.allowed.get(v.rule) if result.is_allowed(v) else None}
            for v in result.violations
        ]
        return json.dumps({
            "input": self.label,
            "passed": not result.errors,
            "errors": len(result.errors),
            "warnings": len(result.warnings),
            "checked": list(result.checked),
            "violations": violations,
        }, indent=2)
