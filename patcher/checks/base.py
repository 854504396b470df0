"""What a safety rule is, what it finds, and how it reads a source file.

A rule is a class in ``patcher/checks/<rule>.py`` with an ``ID`` that the
policy file (``patches/policy.toml``) declares with a severity and the
reason in hardware terms. Its ``VALID`` and ``INVALID`` examples are data:
the test suite is generated from them, and they document the rule.

Rules only read, so they read the stdlib ``ast`` (CPython's C parser, line
numbers kept), parsed once per file and shared by every rule; libcst is for
the files a patch rewrites. A rule first asks ``PythonSource.mentions``
whether the file can hold anything it looks for at all, so most files are
never parsed. The parse is read through ``syntax_index`` (every node by
kind, with its parent) and ``reachability`` (which branches cannot run).
"""

from __future__ import annotations

import ast
import enum
import functools
import io
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Mapping, Sequence

from .reachability import Reachability
from .syntax_index import SyntaxIndex

from ..depth import require_parseable

if TYPE_CHECKING:
    from ..shipping import ShipPlan

# The image runs Python 3.10: shipped code is read with its grammar first.
FEATURE_VERSION = (3, 10)

# What reading a shipped file can raise: SyntaxError (also for a bad coding
# line, and depth.TooDeepError for a file too large or nesting too deep to parse safely),
# UnicodeDecodeError for bytes that are not in the file's encoding,
# ValueError for null bytes on Python 3.10. Rule python-3.10 reports each.
PARSE_ERRORS = (SyntaxError, UnicodeDecodeError, ValueError)


class Severity(str, enum.Enum):
    """How a finding ends a run: an error stops it, a warning is printed, a note only informs."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # not a violation: e.g. a call a rule would flag sits in code that cannot run


@dataclass(frozen=True)
class Violation:
    """One thing a rule found: where, and what (the policy says why it matters)."""

    rule: str
    severity: Severity
    path: str  # context path of the file, e.g. qwen3_6_scripts/paged_attn.py
    line: int  # 1-based; 0 when the finding is about the file as a whole
    message: str  # what was found, in code terms


@dataclass(frozen=True)
class Settings:
    """A rule as the policy declares it: severity, reason and parameter values."""

    rule: str
    severity: Severity
    reason: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def violation(self, path: str, line: int, message: str) -> Violation:
        """Return a violation of this rule, with the policy's severity."""
        return Violation(self.rule, self.severity, path, line, message)

    def note(self, path: str, line: int, message: str) -> Violation:
        """Return a note of this rule: shown, never counted as a warning or an error."""
        return Violation(self.rule, Severity.NOTE, path, line, message)


@dataclass(frozen=True)
class Valid:
    """Code the rule must accept (``params`` override the rule's defaults).

    ``files`` are other files of the build context the example needs (a
    sibling module, an install script); with them the example runs as a
    whole build, ``code`` at ``path``. ``note`` is text a note must hold
    (e.g. why a call cannot run).
    """

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Invalid:
    """Code the rule must reject: a violation at ``line`` whose message contains ``found``."""

    code: str
    line: int
    found: str
    params: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None  # where the violation is, when not in ``code``'s own file


class PythonSource:
    """One shipped Python file, decoded and parsed only when a rule asks, once for all rules."""

    def __init__(self, path: str, data: bytes, untrusted: frozenset[str] = frozenset()):
        self.path = path
        self.data = data
        # Module flags something outside the file may assign (see ``Reachability``).
        self.untrusted = untrusted
        self.newer_syntax: SyntaxError | None = None  # why the 3.10 grammar refused it, if it did

    @functools.cached_property
    def text(self) -> str:
        """Return the file as Python decodes it (its coding line, else UTF-8); raises one of ``PARSE_ERRORS``."""
        encoding, _ = tokenize.detect_encoding(io.BytesIO(self.data).readline)
        return self.data.decode(encoding)

    @functools.cached_property
    def tree(self) -> ast.Module:
        """Return the ``ast`` tree under the 3.10 grammar, else this interpreter's; raises one of ``PARSE_ERRORS``.

        A file with newer syntax is still read by the other rules (the
        python-3.10 rule reports it, from ``newer_syntax``).
        """
        # Vendor bytes: a file too large or deep to parse safely raises TooDeepError (a SyntaxError).
        require_parseable(self.text, self.path, strings_nest=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in vendor code are not our concern
            try:
                return ast.parse(self.text, filename=self.path, feature_version=FEATURE_VERSION)
            except SyntaxError as error:
                self.newer_syntax = error
                return ast.parse(self.text, filename=self.path)

    @functools.cached_property
    def index(self) -> SyntaxIndex:
        """Return every node by kind, with its parent, from one walk of the tree."""
        return SyntaxIndex(self.tree)

    @functools.cached_property
    def reachability(self) -> Reachability:
        """Say which code of this file cannot run."""
        return Reachability(self.index, self.untrusted)

    @functools.cached_property
    def _lines(self) -> list[bytes]:
        return self.text.encode("utf-8").splitlines(keepends=True)

    def line(self, node: ast.AST) -> int:
        """The 1-based line where ``node`` starts."""
        return getattr(node, "lineno", 0)

    def segment(self, node: ast.AST) -> str:
        """Return the source of ``node`` (ast offsets count UTF-8 bytes)."""
        start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1  # type: ignore[attr-defined]
        first, last = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        lines = self._lines[start:end + 1]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0][first:last].decode("utf-8", "replace")
        return b"".join([lines[0][first:], *lines[1:-1], lines[-1][:last]]).decode("utf-8", "replace")

    def code(self, node: ast.AST) -> str:
        """Return the source of ``node`` on one line, shortened for a message."""
        text = " ".join(self.segment(node).split())
        return text if len(text) <= 90 else text[:87] + "..."

    def mentions(self, *names: str) -> bool:
        """Whether the file can refer to any of ``names`` at all: a cheap pre-filter.

        An identifier in code always appears as its bytes, unless the file
        spells it with non-ASCII characters that Python folds to ASCII
        (NFKC); such a file is always parsed.
        """
        if not self.data.isascii():
            return True
        return any(name.encode("ascii") in self.data for name in names)


@dataclass(frozen=True)
class BuildContext:
    """What tree rules read: the ship plan, the patched files, and the context's files as they will be written."""

    plan: "ShipPlan"
    targets: Sequence[str]  # context paths of the files the patch set changes
    python: Sequence[str]  # the shipped Python files, sorted
    reader: Callable[[str], bytes]  # raises KeyError for a path that is not a file of the context
    # For each word a tree rule declares (``TreeRule.WORDS``), the shipped Python files whose bytes
    # hold it (a file with non-ASCII bytes always counts): noted while the file rules read them.
    words: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # Files the file rules parsed in this process, kept for the tree rules: each file is parsed once.
    parsed: Mapping[str, PythonSource] = field(default_factory=dict)

    def mentioning(self, word: str) -> Sequence[str]:
        """Return the shipped Python files that can mention ``word`` (every one if it was not noted)."""
        return self.words.get(word, self.python)

    def read(self, path: str) -> bytes:
        """Return the bytes of a context file, or b"" when there is none."""
        try:
            return self.reader(path)
        except KeyError:
            return b""

    def text(self, path: str) -> str:
        """Return a context file as text (UTF-8, a BOM dropped, undecodable bytes replaced)."""
        return self.read(path).decode("utf-8-sig", "replace")

    def source(self, path: str) -> PythonSource | None:
        """Return a shipped Python file to parse (the file rules' parse, if they kept it), or None when the context lacks it."""
        try:
            data = self.reader(path)
        except KeyError:
            return None
        known = self.parsed.get(path)
        if known is not None and (known.data is data or known.data == data):
            return known
        return PythonSource(path, data)


class Rule:
    """A safety rule: ``ID`` matches the policy, ``PARAMS`` its defaults."""

    ID: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()  # former ids, still accepted by the policy and --allow
    PARAMS: ClassVar[Mapping[str, Any]] = {}
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()


class FileRule(Rule):
    """A rule read off one Python file at a time.

    ``check_file`` may depend on the file's bytes and the settings only
    (never on its path): its results are cached by content.
    """

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield every violation in ``source``; a file that does not parse yields none."""
        raise NotImplementedError


class TreeRule(Rule):
    """A rule read off the whole build: the Dockerfile, its scripts, the shipped files."""

    # Words whose shipped Python files the rule reads: noted in one pass, so it need not read them all.
    WORDS: ClassVar[tuple[str, ...]] = ()

    # Tree examples: the code is an install script run by a fixed Dockerfile
    # (see examples.py), the patched file being qwen3_6_scripts/paged_attn.py.
    def check_tree(self, build: BuildContext, settings: Settings) -> Iterator[Violation]:
        """Yield every violation of the build."""
        raise NotImplementedError
