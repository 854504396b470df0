"""Run one rule on one of its own ``VALID`` / ``INVALID`` examples.

The test suite and ``patcher test`` both judge a rule by its examples
through ``check_example``: a file rule reads the example as one Python
file; a tree rule reads it as the install script of a small build context
(``EXAMPLE_FILES``) whose patched file is ``EXAMPLE_TARGET``.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO, Mapping, Sequence

from ..archive.tree import SourceFile
from ..shipping import plan_shipping
from .base import FileRule, Invalid, PythonSource, Rule, Settings, Severity, TreeRule, Valid, Violation
from .install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET

EXAMPLE_PATH = "example.py"  # the path a file rule's example is read at


class MemoryTree:
    """A read-only build context held in a dict of path -> text."""

    label = "<memory>"

    def __init__(self, files: Mapping[str, str], executable: Sequence[str] = ()):
        self._files = {path: text.encode() for path, text in sorted(files.items())}
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


def check_example(rule: Rule, example: Valid | Invalid) -> list[Violation]:
    """Return what ``rule`` finds in ``example`` (a VALID one must give none)."""
    settings = example_settings(rule, example.params)
    if isinstance(rule, FileRule):
        return list(rule.check_file(PythonSource(EXAMPLE_PATH, example.code.encode()), settings))
    if isinstance(rule, TreeRule):
        files = {**EXAMPLE_FILES, EXAMPLE_SCRIPT: example.code}
        plan = plan_shipping(MemoryTree(files, executable=[EXAMPLE_SCRIPT]))
        return list(rule.check_tree(plan, [EXAMPLE_TARGET], settings))
    raise TypeError(f"rule {rule.ID} is neither a file rule nor a tree rule")
