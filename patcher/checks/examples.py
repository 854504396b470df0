"""Run one rule on one of its own ``VALID`` / ``INVALID`` examples.

The test suite and ``patcher test`` both judge a rule by its examples
through ``judge_example``: a file rule reads the example as one Python
file; a tree rule reads it as the install script of a small build context
(``EXAMPLE_FILES``) whose patched file is ``EXAMPLE_TARGET``. An example
with ``files`` (or its own ``path``) runs as that whole build context.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Mapping, Sequence

from ..archive.tree import SourceFile
from ..shipping import plan_shipping
from .base import FileRule, Invalid, PythonSource, Rule, Settings, Severity, TreeRule, Valid, Violation
from .install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET

EXAMPLE_PATH = "example.py"  # the path a file rule's example is read at


class MemoryTree:
    """A read-only build context held in a dict of path -> text (or bytes)."""

    label = "<memory>"

    def __init__(self, files: Mapping[str, str | bytes], executable: Sequence[str] = ()):
        self._files = {path: data.encode() if isinstance(data, str) else data for path, data in sorted(files.items())}
        self._executable = set(executable)

    def files(self) -> Sequence[SourceFile]:
        """Return every file, sorted by path."""
        return [SourceFile(p, len(d), p in self._executable) for p, d in self._files.items()]

    def read(self, path: str) -> bytes:
        """Return the content of PATH (KeyError if it is not a file here)."""
        return self._files[path]

    def open(self, path: str) -> BinaryIO:
        """Return a stream over the content of PATH."""
        return io.BytesIO(self._files[path])

    def exists(self, path: str) -> bool:
        """Return whether PATH is a file here."""
        return path in self._files

    def sha256(self) -> str | None:
        """Return None: a memory tree has no input file."""
        return None


def example_settings(rule: Rule, params: Mapping[str, Any] | None = None) -> Settings:
    """Return settings for running ``rule`` on an example: error severity, defaults overridden by ``params``."""
    return Settings(rule.ID, Severity.ERROR, "the reason", {**rule.PARAMS, **(params or {})})


def example_path(rule: Rule, example: Valid | Invalid) -> str:
    """Say where ``example.code`` sits: its own ``path``, else the rule's kind of file."""
    if example.path is not None:
        return example.path
    if isinstance(rule, FileRule):
        return EXAMPLE_TARGET if example.files else EXAMPLE_PATH
    return EXAMPLE_SCRIPT


def run_example(rule: Rule, example: Valid | Invalid) -> list[Violation]:
    """Return everything ``rule`` reports on ``example``, notes included.

    A file rule's example without ``files`` or ``path`` is one file (its
    tree part, if it has one, has nothing else to read); any other runs as
    a build context: ``EXAMPLE_FILES``, then ``example.files``, then
    ``example.code`` at ``example_path``, checked as ``check`` would.
    """
    from .policy import Policy
    from .runner import check_tree

    settings = example_settings(rule, example.params)
    path = example_path(rule, example)
    if isinstance(rule, FileRule) and not example.files and example.path is None:
        return list(rule.check_file(PythonSource(path, example.code.encode()), settings))
    if not isinstance(rule, (FileRule, TreeRule)):
        raise TypeError(f"rule {rule.ID} is neither a file rule nor a tree rule")
    files = {**EXAMPLE_FILES, **example.files, path: example.code}
    tree = MemoryTree(files, executable=[EXAMPLE_SCRIPT])
    policy = Policy(Path("<example>"), {rule.ID: settings})
    result = check_tree(tree, plan_shipping(tree), policy, targets=[EXAMPLE_TARGET], use_cache=False)
    return [v for v in result.violations if v.rule == rule.ID]


def check_example(rule: Rule, example: Valid | Invalid) -> list[Violation]:
    """Return what ``rule`` holds against ``example``: its violations, notes left out (a VALID one gives none)."""
    return [v for v in run_example(rule, example) if v.severity is not Severity.NOTE]



@dataclass(frozen=True)
class Verdict:
    """How a rule did on one of its examples; ``problem`` says what went wrong ("" when it passed).

    ``expected`` and ``got`` put what the example asks for beside what the
    rule reported, one finding a line (``path:line: severity: message``),
    for a diff.
    """

    passed: bool
    problem: str = ""
    expected: str = ""
    got: str = ""


NOTHING = "nothing reported"


def judge_example(rule: Rule, example: Valid | Invalid) -> Verdict:
    """Judge ``rule`` on one of its own examples, the one way the tests and ``patcher test`` both use.

    A VALID example passes when the rule reports no violation and, with a
    ``note``, makes a note holding that text (without one, no note at all).
    An INVALID example passes when every violation is an error of this rule
    and one of them sits at ``example_path`` and ``example.line`` with
    ``example.found`` in its message.
    """
    found = run_example(rule, example)
    violations = [v for v in found if v.severity is not Severity.NOTE]
    notes = [v for v in found if v.severity is Severity.NOTE]
    got = "\n".join(f"{v.path}:{v.line}: {v.severity.value}: {v.message}" for v in found) or NOTHING
    if isinstance(example, Valid):
        expected = NOTHING if example.note is None else f"...: note: ...{example.note}..."
        if violations:
            return Verdict(False, "the rule reports code it must accept", expected, got)
        if example.note is None and notes:
            return Verdict(False, "the rule makes a note the example does not expect (give it a 'note')",
                           expected, got)
        if example.note is not None and not any(example.note in v.message for v in notes):
            return Verdict(False, f"no note holds {example.note!r}", expected, got)
        return Verdict(True)
    path = example_path(rule, example)
    expected = f"{path}:{example.line}: error: ...{example.found}..."
    if not violations:
        return Verdict(False, "the rule found nothing", expected, got)
    strays = [v for v in violations if v.rule != rule.ID or v.severity is not Severity.ERROR]
    if strays:
        return Verdict(False, f"the example's findings must all be errors of {rule.ID}", expected, got)
    if not any((v.path, v.line) == (path, example.line) and example.found in v.message for v in violations):
        return Verdict(False, f"the rule does not report {path} line {example.line} with {example.found!r}",
                       expected, got)
    return Verdict(True)
