"""What a safety rule is, what it finds, and how it reads a source file.

A rule is a class in ``patcher/checks/<rule>.py`` with an ``ID`` that the
policy file (``patches/policy.toml``) declares with a severity and the
reason in hardware terms. Its ``VALID`` and ``INVALID`` examples are data:
the test suite is generated from them, and they document the rule.
"""

from __future__ import annotations

import enum
import functools
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping, Sequence, TypeVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ..syntax import child_nodes

if TYPE_CHECKING:
    from ..shipping import ShipPlan

# The image runs Python 3.10; every parse of shipped code says so.
PYTHON_VERSION = "3.10"

# What parsing a shipped file can raise: libcst's syntax error, a SyntaxError
# for a bad coding line, or UnicodeDecodeError for bytes past the first two
# lines that are not in the file's encoding. Rule python-3.10 reports each.
PARSE_ERRORS = (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError)


class Severity(str, enum.Enum):
    """How a violation ends a run: an error stops it, a warning is printed."""

    ERROR = "error"
    WARNING = "warning"


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
        """A violation of this rule, with the policy's severity."""
        return Violation(self.rule, self.severity, path, line, message)


@dataclass(frozen=True)
class Valid:
    """Code the rule must accept (``params`` override the rule's defaults)."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must reject: a violation at ``line`` whose message contains ``found``."""

    code: str
    line: int
    found: str
    params: Mapping[str, Any] = field(default_factory=dict)


class PythonSource:
    """One shipped Python file, parsed only when a rule asks, positions only when one reports."""

    def __init__(self, path: str, data: bytes):
        self.path = path
        self.data = data

    @functools.cached_property
    def module(self) -> cst.Module:
        """The libcst tree; raises one of ``PARSE_ERRORS`` (rule python-3.10 reports it)."""
        config = cst.PartialParserConfig(python_version=PYTHON_VERSION)
        return cst.parse_module(self.data, config=config)

    @functools.cached_property
    def index(self) -> "SyntaxIndex":
        """Every node of the kinds rules look for, with its ancestors, from one walk of the tree."""
        return SyntaxIndex(self.module)

    @functools.cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        # unsafe_skip_copy keeps node identity, so nodes found in ``module``
        # can be looked up; the tree is never mutated.
        return MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)

    def line(self, node: cst.CSTNode) -> int:
        """The 1-based line where ``node`` starts."""
        return self._positions[node].start.line

    def mentions(self, *names: str) -> bool:
        """Whether the file can refer to any of ``names`` at all: a cheap pre-filter.

        An identifier in code always appears as its bytes, unless the file
        spells it with non-ASCII characters that Python folds to ASCII
        (NFKC); such a file is always parsed.
        """
        if not self.data.isascii():
            return True
        return any(name.encode("ascii") in self.data for name in names)


class Rule:
    """A safety rule: ``ID`` matches the policy, ``PARAMS`` its defaults."""

    ID: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    PARAMS: ClassVar[Mapping[str, Any]] = {}
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()


class FileRule(Rule):
    """A rule read off one Python file at a time."""

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield every violation in ``source``; a file that does not parse yields none."""
        raise NotImplementedError


class TreeRule(Rule):
    """A rule read off the whole build: the Dockerfile, its scripts, the patched files."""

    # Tree examples: the code is an install script run by a fixed Dockerfile
    # (see tests), the patched file being qwen3_6_scripts/paged_attn.py.
    def check_tree(self, plan: "ShipPlan", targets: Sequence[str], settings: Settings) -> Iterator[Violation]:
        """Yield every violation; ``targets`` are the context paths the patch set changes."""
        raise NotImplementedError


# -- syntax helpers shared by the rules ---------------------------------


def identifier(name: str) -> str:
    """An identifier as Python reads it (NFKC-folded, as the tokenizer does)."""
    return unicodedata.normalize("NFKC", name)


def dotted(node: cst.BaseExpression | None) -> str:
    """``a.b.c`` for a Name/Attribute chain, else an empty string."""
    if isinstance(node, cst.Name):
        return identifier(node.value)
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{identifier(node.attr.value)}" if base else ""
    return ""


def called_name(call: cst.Call) -> str:
    """The last name of what ``call`` calls: ``ops.paged_attention_v1(...)`` -> paged_attention_v1."""
    func = call.func
    if isinstance(func, cst.Name):
        return identifier(func.value)
    if isinstance(func, cst.Attribute):
        return identifier(func.attr.value)
    return ""


def code(node: cst.CSTNode) -> str:
    """The source of ``node`` on one line, shortened for a message."""
    text = " ".join(cst.Module(body=[]).code_for_node(node).split())
    return text if len(text) <= 90 else text[:87] + "..."


def integer_value(node: cst.BaseExpression) -> int | None:
    """The value of a constant integer expression (``32768``, ``32 * 1024``, ``1 << 15``), else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.BinaryOperation):
        left, right = integer_value(node.left), integer_value(node.right)
        if left is None or right is None:
            return None
        operator = type(node.operator)
        if operator is cst.Add:
            return left + right
        if operator is cst.Subtract:
            return left - right
        if operator is cst.Multiply:
            return left * right
        if operator is cst.LeftShift and 0 <= right < 64:
            return left << right
        if operator is cst.Power and 0 <= right < 64:
            return int(left**right)
        if operator is cst.FloorDivide and right:
            return left // right
    return None


N = TypeVar("N", bound=cst.CSTNode)

# The kinds of node rules ask the index for.
INDEXED = (cst.Call, cst.Attribute, cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign, cst.ClassDef)


class SyntaxIndex:
    """The nodes of ``INDEXED`` kinds in a module, in source order, each with its ancestors.

    Built by one walk over the nodes' fields: a libcst visitor rebuilds
    every node it passes, which made each rule's own walk cost as much as
    parsing the file.
    """

    def __init__(self, module: cst.Module):
        self._found: dict[type, list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]] = defaultdict(list)
        # Iterative, so that a deeply nested expression cannot hit the recursion limit.
        path: list[cst.CSTNode] = []
        pending: list[Iterator[cst.CSTNode]] = []

        def enter(node: cst.CSTNode) -> None:
            if isinstance(node, INDEXED):
                self._found[type(node)].append((node, tuple(path)))
            path.append(node)
            pending.append(child_nodes(node, code_only=True))

        enter(module)
        while pending:
            child = next(pending[-1], None)
            if child is None:
                pending.pop()
                path.pop()
            else:
                enter(child)

    def of(self, kind: type[N]) -> list[tuple[N, tuple[cst.CSTNode, ...]]]:
        """Every node of ``kind`` and its ancestors (the module first, the parent last)."""
        return self._found.get(kind, [])  # type: ignore[return-value]

    def calls(self, name: str, inside: cst.CSTNode | None = None) -> list[tuple[cst.Call, tuple[cst.CSTNode, ...]]]:
        """Calls of ``name`` (bare or as an attribute), optionally only those inside ``inside``."""
        return [(call, chain) for call, chain in self.of(cst.Call)
                if called_name(call) == name and (inside is None or contains(chain, inside))]


def contains(ancestors: Sequence[cst.CSTNode], node: cst.CSTNode) -> bool:
    """Whether ``node`` is one of ``ancestors`` (by identity: equal-looking nodes are different places)."""
    return any(a is node for a in ancestors)
