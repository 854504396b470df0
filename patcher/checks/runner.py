"""Run the policy's rules over what ships; every finding is a value, nothing stops the run."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ..archive.tree import SourceTree
from ..shipping import ShipPlan
from .base import PARSE_ERRORS, BuildContext, FileRule, PythonSource, Settings, Severity, TreeRule, Violation
from .cache import RuleCache, cache_dir
from .policy import Policy, canonical
from .python_3_10 import Python310
from .rules import RULES

Reader = Callable[[], bytes]


@dataclass(frozen=True)
class CheckResult:
    """What the rules found, and which rules this run is allowed to break (with why)."""

    policy: Policy
    violations: tuple[Violation, ...]  # notes too (severity note): they never count
    checked: tuple[str, ...]  # the Python files read
    allowed: Mapping[str, str] = field(default_factory=dict)  # rule id -> reason of the override

    def is_allowed(self, violation: Violation) -> bool:
        """Whether an override covers ``violation``."""
        return violation.severity is not Severity.NOTE and violation.rule in self.allowed

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

    @property
    def notes(self) -> tuple[Violation, ...]:
        """Return what the rules note without counting it: e.g. a flagged call in code that cannot run."""
        return tuple(v for v in self.violations if v.severity is Severity.NOTE)


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
    read: Callable[[str], bytes] | None = None,
    use_cache: bool = True,
) -> CheckResult:
    """Run every file rule on ``files`` and, given a plan, every tree rule on it.

    ``files`` are read one at a time and dropped once checked. A file that
    does not parse or decode gets only the python-3.10 finding: the other
    rules cannot read it. What the file rules find is cached by content
    (``cache.py``). ``read`` gives tree rules the context's files as they
    will be written (KeyError for a path that is not one).
    """
    violations: list[Violation] = []
    checked: list[str] = []
    file_rules = [(rule, s) for r, s in policy.rules.items() if isinstance(rule := RULES[r], FileRule)]
    folder = cache_dir() if use_cache else None
    cache = RuleCache(folder, [s for _, s in file_rules]) if folder is not None else None
    tree_rules = [(rule, s) for r, s in policy.rules.items() if isinstance(rule := RULES[r], TreeRule)]
    words: dict[str, list[str]] = {w: [] for rule, _ in tree_rules for w in rule.WORDS}
    for path, reader in files:
        checked.append(path)
        data = reader()
        for word, holding in words.items():
            if word.encode() in data or not data.isascii():
                holding.append(path)
        key = cache.key(data) if cache is not None else ""
        hit = cache.get(key, path) if cache is not None else None
        if hit is not None:
            violations.extend(hit)
            continue
        found, readable = _check_file(PythonSource(path, data), file_rules)
        violations.extend(found)
        if cache is not None and readable:
            cache.put(key, found)
    if plan is not None:
        build = BuildContext(plan, tuple(targets), tuple(checked), read or _no_files, words)
        for tree_rule, settings in tree_rules:
            violations.extend(tree_rule.check_tree(build, settings))
    violations.sort(key=lambda v: (v.path, v.line, v.rule, v.message))
    return CheckResult(policy, tuple(violations), tuple(checked),
                       {canonical(rule): reason for rule, reason in allowed})


def _check_file(source: PythonSource, file_rules: Sequence[tuple[FileRule, Settings]]) -> tuple[list[Violation], bool]:
    """Return what the file rules find in ``source``, and whether it could be read at all."""
    try:
        source.tree
        readable = True
    except PARSE_ERRORS:
        readable = False
    found: list[Violation] = []
    for rule, settings in file_rules:
        if readable or isinstance(rule, Python310):
            found.extend(rule.check_file(source, settings))
    return found, readable


def _no_files(path: str) -> bytes:
    raise KeyError(path)


def check_tree(
    tree: SourceTree,
    plan: ShipPlan,
    policy: Policy,
    *,
    changes: Mapping[str, bytes] | None = None,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
    use_cache: bool = True,
) -> CheckResult:
    """Check the shipped files of ``tree`` as they will be written: ``changes`` first, then the tree."""
    overlay = changes or {}

    def read(path: str) -> bytes:
        return overlay[path] if path in overlay else tree.read(path)

    files = ((path, functools.partial(read, path)) for path in shipped_python(plan))
    return run_rules(files, policy, plan=plan, targets=targets, allowed=allowed, read=read, use_cache=use_cache)
