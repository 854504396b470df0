"""Run the policy's rules over what ships; every finding is a value, nothing stops the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ..archive.tree import SourceTree
from ..shipping import ShipPlan
from .base import PARSE_ERRORS, FileRule, PythonSource, Severity, TreeRule, Violation
from .policy import Policy
from .python_3_10 import Python310
from .rules import RULES

Reader = Callable[[], bytes]


@dataclass(frozen=True)
class CheckResult:
    """What the rules found, and which rules this run is allowed to break (with why)."""

    policy: Policy
    violations: tuple[Violation, ...]
    checked: tuple[str, ...]  # the Python files read
    allowed: Mapping[str, str] = field(default_factory=dict)  # rule id -> reason of the override

    def is_allowed(self, violation: Violation) -> bool:
        """Whether an override covers ``violation``."""
        return violation.rule in self.allowed

    @property
    def errors(self) -> tuple[Violation, ...]:
        """Error violations no override covers: any one of them stops the run."""
        return tuple(v for v in self.violations if v.severity is Severity.ERROR and not self.is_allowed(v))

    @property
    def warnings(self) -> tuple[Violation, ...]:
        """Warnings no override covers: printed, never stopping."""
        return tuple(v for v in self.violations if v.severity is Severity.WARNING and not self.is_allowed(v))

    @property
    def overridden(self) -> tuple[Violation, ...]:
        """Violations an override covers."""
        return tuple(v for v in self.violations if self.is_allowed(v))


def shipped_python(plan: ShipPlan) -> list[str]:
    """Every Python file the Docker build takes from the context, sorted."""
    return sorted(path for path in plan.copied if path.endswith(".py"))


def run_rules(
    files: Iterable[tuple[str, Reader]],
    policy: Policy,
    *,
    plan: ShipPlan | None = None,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
) -> CheckResult:
    """Run every file rule on ``files`` and, given a plan, every tree rule on it.

    ``files`` are read one at a time and dropped once checked. A file that
    libcst cannot parse or decode gets only the python-3.10 finding: the
    other rules cannot read it.
    """
    violations: list[Violation] = []
    checked: list[str] = []
    file_rules = [(rule, s) for r, s in policy.rules.items() if isinstance(rule := RULES[r], FileRule)]
    for path, read in files:
        source = PythonSource(path, read())
        checked.append(path)
        try:
            source.module
            readable = True
        except PARSE_ERRORS:
            readable = False
        for rule, settings in file_rules:
            if readable or isinstance(rule, Python310):
                violations.extend(rule.check_file(source, settings))
    if plan is not None:
        for rule_id, settings in policy.rules.items():
            rule = RULES[rule_id]
            if isinstance(rule, TreeRule):
                violations.extend(rule.check_tree(plan, targets, settings))
    violations.sort(key=lambda v: (v.path, v.line, v.rule, v.message))
    return CheckResult(policy, tuple(violations), tuple(checked), dict(allowed))


def check_tree(
    tree: SourceTree,
    plan: ShipPlan,
    policy: Policy,
    *,
    changes: Mapping[str, bytes] | None = None,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
) -> CheckResult:
    """Check the shipped files of ``tree`` as they will be written: ``changes`` first, then the tree."""
    overlay = changes or {}

    def reader(path: str) -> Reader:
        return lambda: overlay[path] if path in overlay else tree.read(path)

    files = ((path, reader(path)) for path in shipped_python(plan))
    return run_rules(files, policy, plan=plan, targets=targets, allowed=allowed)
