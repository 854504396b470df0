"""Match Python code patterns with metavariables against a libcst tree, on syntax alone.

A pattern is ordinary Python in which ``$NAME`` stands for any one node
(an expression, an argument, a statement) and ``$...NAME`` for any run of
arguments, list elements or statements; ``$_`` and ``$...`` match without
binding. A metavariable used twice must match the same code both times.

Matching ignores everything that does not change what the code means to
the parser: comments, blank lines, line breaks and spacing, redundant
parentheses, trailing commas, quote style and the spelling of numbers.
That is what lets one pattern hold across vendor drops that differ in
exactly those ways (and in CRLF line endings, which libcst keeps apart
from the nodes).
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Iterator, Mapping, Sequence, Union

import libcst as cst

from ..syntax import child_nodes, field_names, is_node, may_hold_blocks

# `$` cannot appear in Python outside strings, so a metavariable can be turned
# into a reserved identifier before parsing and recognised afterwards.
_METAVAR = re.compile(r"\$(\.\.\.)?([A-Za-z_][A-Za-z0-9_]*)?")
_SINGLE = "__pv_"
_SEQUENCE = "__pvs_"
_ANONYMOUS = "_"

Capture = Union[cst.CSTNode, tuple[cst.CSTNode, ...]]
Bindings = Mapping[str, Capture]
EMPTY: Bindings = MappingProxyType({})

class PatternSyntaxError(ValueError):
    """The pattern or template is not valid Python once metavariables are read."""


def encode_metavariables(code: str) -> str:
    """Replace ``$X`` / ``$...X`` by reserved identifiers so libcst can parse the code."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(2) or _ANONYMOUS
        return f"{_SEQUENCE if match.group(1) else _SINGLE}{name}__"

    return _METAVAR.sub(substitute, code)


def decode_metavariables(code: str) -> str:
    """Turn reserved identifiers back into ``$X`` / ``$...X`` for messages."""
    code = re.sub(rf"{_SEQUENCE}(\w+?)__", lambda m: "$..." + _display(m.group(1)), code)
    return re.sub(rf"{_SINGLE}(\w+?)__", lambda m: "$" + _display(m.group(1)), code)


def _display(name: str) -> str:
    return "" if name == _ANONYMOUS else name


def single_metavariable(node: cst.CSTNode) -> str | None:
    """Name of the ``$X`` this node is, if it is one."""
    return _metavariable(node, _SINGLE)


def sequence_metavariable(node: cst.CSTNode) -> str | None:
    """Name of the ``$...X`` this node is (as a statement, argument or element), if any."""
    return _metavariable(node, _SEQUENCE)


def _metavariable(node: cst.CSTNode, prefix: str) -> str | None:
    # A metavariable standing for a statement is parsed as a bare name in an
    # expression statement; one standing for a run of arguments or elements
    # as a bare positional argument or element.
    # Exact types: every libcst node class is an ABC, and isinstance() against
    # one runs Python code; matching asks this for every node it compares.
    if type(node) is cst.SimpleStatementLine and len(node.body) == 1:
        node = node.body[0]
    if type(node) is cst.Expr:
        node = node.value
    elif prefix == _SEQUENCE and type(node) is cst.Arg and node.keyword is None and not node.star:
        node = node.value
    elif prefix == _SEQUENCE and type(node) is cst.Element:
        node = node.value
    if type(node) is cst.Name and node.value.startswith(prefix) and node.value.endswith("__"):
        return node.value[len(prefix) : -2]
    return None


@dataclass(frozen=True)
class Pattern:
    """A parsed pattern: one expression, or a run of statements."""

    source: str
    statements: tuple[cst.BaseStatement, ...]

    @classmethod
    def parse(cls, code: str) -> "Pattern":
        """Parse pattern text, or raise PatternSyntaxError saying where it breaks."""
        module = parse_snippet(code)
        if not module.body:
            raise PatternSyntaxError("the pattern is empty")
        return cls(source=code.strip(), statements=tuple(module.body))

    @property
    def expression(self) -> cst.BaseExpression:
        """The pattern as one expression (for operations that look inside statements)."""
        only = self.statements[0] if len(self.statements) == 1 else None
        if (
            isinstance(only, cst.SimpleStatementLine)
            and len(only.body) == 1
            and isinstance(only.body[0], cst.Expr)
        ):
            return only.body[0].value
        raise PatternSyntaxError(f"expected one expression, got statements: {self.source!r}")

    def __str__(self) -> str:
        return " / ".join(line.strip() for line in self.source.splitlines() if line.strip())


def parse_snippet(code: str) -> cst.Module:
    """Parse a pattern or rendered template, metavariables included."""
    import textwrap

    text = textwrap.dedent(encode_metavariables(code)).strip("\n") + "\n"
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise PatternSyntaxError(f"not valid Python at {describe_syntax_error(error)}") from None
    # libcst files comments above the first statement under the module
    # header; in a snippet they belong to that statement.
    if module.header and module.body:
        first = module.body[0]
        module = module.with_changes(
            header=[],
            body=[first.with_changes(leading_lines=[*module.header, *first.leading_lines]), *module.body[1:]],
        )
    return module


def describe_syntax_error(error: cst.ParserSyntaxError) -> str:
    """Say "line L, column C: what" for a libcst parse error, in one line."""
    found = re.match(r"(?:parser error: )?error at (\d+):(\d+): (.*)", error.message)
    if found:
        return f"line {found.group(1)}, column {found.group(2)}: {found.group(3)}"
    return f"line {error.raw_line}: {error.message.splitlines()[0] if error.message else 'syntax error'}"


# --------------------------------------------------------------------------- matching


def match(pattern: object, node: object, bindings: Bindings = EMPTY) -> Bindings | None:
    """Return the bindings that make ``pattern`` match ``node``, or None."""
    if is_node(pattern):
        name = single_metavariable(pattern)
        if name is not None and is_node(node):
            return _bind(bindings, name, node)
        if not is_node(node):
            return None
        if type(pattern) in _SUITES and type(node) in _SUITES:
            return match_sequence(_suite_units(pattern), _suite_units(node), bindings)  # type: ignore[arg-type]
        if type(pattern) is not type(node):
            return None
        if type(pattern) is cst.Call:
            bindings = _bind_call_layout(pattern, node, bindings)  # type: ignore[arg-type]
        literal = _literal_equal(pattern, node)
        if literal is not None:
            return bindings if literal else None
        for name in field_names(pattern, code_only=True):
            result = match(getattr(pattern, name), getattr(node, name), bindings)
            if result is None:
                return None
            bindings = result
        return bindings
    if isinstance(pattern, (list, tuple)):
        if not isinstance(node, (list, tuple)):
            return None
        return match_sequence(pattern, node, bindings)
    # Strings (a parameter's star), and MaybeSentinel.DEFAULT where a node may
    # be missing (`def f(a)` has no star_arg), which equals only itself.
    return bindings if pattern == node else None


def match_sequence(
    patterns: Sequence[object], nodes: Sequence[object], bindings: Bindings = EMPTY
) -> Bindings | None:
    """Match element by element, letting ``$...X`` absorb any run of nodes."""
    return _sequence(patterns, 0, nodes, 0, bindings)


def _sequence(patterns: Sequence[object], at: int, nodes: Sequence[object], on: int,
              bindings: Bindings) -> Bindings | None:
    """Match ``patterns[at:]`` against ``nodes[on:]`` (indices, not slices: a long run is not copied per try)."""
    if at == len(patterns):
        return bindings if on == len(nodes) else None
    first = patterns[at]
    name = sequence_metavariable(first) if is_node(first) else None
    if name is not None:
        earlier = bindings.get(name)
        if at == len(patterns) - 1:
            lengths: Iterable[int] = (len(nodes) - on,)  # the last one takes the rest
        elif isinstance(earlier, tuple):
            lengths = (len(earlier),)  # bound before: the same run again, so as long
        else:
            lengths = range(len(nodes) - on + 1)
        # Shortest run first: later patterns in the sequence anchor the rest.
        for length in lengths:
            if name in bindings:
                bound = _bind(bindings, name, _run(nodes, on, length))
                result = None if bound is None else _sequence(patterns, at + 1, nodes, on + length, bound)
            else:
                # Bound once the rest matched, unless the rest uses it: a failed
                # try then costs no copy of the run (see _bind_after).
                result = _sequence(patterns, at + 1, nodes, on + length, bindings)
                if result is not None:
                    result = _bind_after(patterns, at, nodes, on, length, bindings, result, name)
            if result is not None:
                return result
        return None
    if on >= len(nodes):
        return None
    bound = match(first, nodes[on], bindings)
    if bound is None:
        return None
    return _sequence(patterns, at + 1, nodes, on + 1, bound)


def _run(nodes: Sequence[object], on: int, length: int) -> tuple[cst.CSTNode, ...]:
    return tuple(n for n in nodes[on : on + length] if is_node(n))


def _bind_after(patterns: Sequence[object], at: int, nodes: Sequence[object], on: int, length: int,
                bindings: Bindings, result: Bindings, name: str) -> Bindings | None:
    """Add NAME's run to RESULT (what the rest bound), as if it had been bound first.

    If the rest bound NAME itself, matching it again with NAME bound is
    what binding first would have done. Otherwise binding first could not
    have changed how the rest matched, and NAME goes where it would have
    been, right after BINDINGS.
    """
    run = _run(nodes, on, length)
    if name == _ANONYMOUS:
        return result
    if name in result:
        bound = _bind(bindings, name, run)
        return None if bound is None else _sequence(patterns, at + 1, nodes, on + length, bound)
    merged = {**bindings, name: run}
    merged.update((key, value) for key, value in result.items() if key not in bindings)
    return MappingProxyType(merged)


def same_code(a: Capture, b: Capture) -> bool:
    """Whether two nodes (or runs of nodes) are the same code, layout aside."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
            return False
        return all(same_code(x, y) for x, y in zip(a, b))
    return match(a, b) is not None


def _bind(bindings: Bindings, name: str, value: Capture) -> Bindings | None:
    if name == _ANONYMOUS:
        return bindings
    if name in bindings:
        return bindings if same_code(bindings[name], value) else None
    return MappingProxyType({**bindings, name: value})


def _bind_call_layout(pattern: cst.Call, node: cst.Call, bindings: Bindings) -> Bindings:
    # f($...ARGS) captures the arguments; keep the line break after "(" too,
    # so a call written one argument per line is rebuilt the same way.
    if len(pattern.args) == 1:
        name = sequence_metavariable(pattern.args[0])
        if name and name != _ANONYMOUS and layout_key(name) not in bindings:
            return MappingProxyType({**bindings, layout_key(name): node.whitespace_before_args})
    return bindings


def layout_key(name: str) -> str:
    """The binding under which the layout around a captured argument run is kept."""
    return f"{name}:layout"


_SUITES = (cst.IndentedBlock, cst.SimpleStatementSuite)  # every BaseSuite


def _suite_units(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    # `if x: return y` and its indented form are the same code: compare both
    # as statement lines (keeping each line whole keeps its comments with it).
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=[statement]) for statement in suite.body]
    assert isinstance(suite, cst.IndentedBlock)
    return list(suite.body)


def _literal_equal(pattern: cst.CSTNode, node: cst.CSTNode) -> bool | None:
    # 'a' == "a" and 0x10 == 16: compare literal values, not their spelling.
    if type(pattern) in _LITERALS:
        try:
            return bool(_literal_value(pattern.value) == _literal_value(node.value))  # type: ignore[attr-defined]
        except (ValueError, SyntaxError):
            return pattern.value == node.value  # type: ignore[attr-defined]
    return None


def _literal_value(text: str) -> object:
    if "\\" not in text:
        return ast.literal_eval(text)
    # Vendor code writes re.compile("\d+"): evaluating it warns (SyntaxWarning
    # on 3.12+, printed on the user's terminal) on every comparison; the
    # warning is about the vendor's spelling, not anything patcher can act on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(text)


_LITERALS = (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary)


# --------------------------------------------------------------------------- searching


@dataclass(frozen=True)
class StatementMatch:
    """A run of statements ``block.body[start:end]`` that matched, with its bindings."""

    block: cst.CSTNode  # the IndentedBlock or Module holding the run
    start: int
    end: int
    bindings: Bindings


def find_statements(pattern: Pattern, scope: cst.CSTNode) -> list[StatementMatch]:
    """Find every non-overlapping run of statements in ``scope`` that matches."""
    # Nodes and patterns are immutable, so the answer for the same two objects
    # never changes; a patch asks it several times (its markers, each step, then
    # the step's fingerprint) about scopes that earlier steps left untouched.
    # An entry holds its pattern and scope alive, so no other object can
    # have their ids while it is kept: the ids alone identify the pair.
    key = (id(pattern), id(scope))
    kept = _FOUND.get(key)
    if kept is not None:
        return list(kept[2])
    found = _find_statements(pattern, scope)
    if len(_FOUND) >= _FOUND_KEPT:
        _FOUND.pop(next(iter(_FOUND)))
    _FOUND[key] = (pattern, scope, tuple(found))
    return found


_FOUND: dict[tuple[int, int], tuple[Pattern, cst.CSTNode, tuple[StatementMatch, ...]]] = {}
_FOUND_KEPT = 256


def _find_statements(pattern: Pattern, scope: cst.CSTNode) -> list[StatementMatch]:
    found: list[StatementMatch] = []
    first = pattern.statements[0]
    runs = any(sequence_metavariable(p) is not None for p in pattern.statements)
    for block in _blocks(scope):
        body = list(block.body)  # type: ignore[attr-defined]
        # A `$...X` lets a run start anywhere and end anywhere after: trying
        # every end from every start is cubic in a large block. Where each
        # of the pattern's own statements can match bounds the shortest run
        # from a start (and rules out every start past the last of them).
        reach = _Reach(pattern.statements, body) if runs else None
        start = 0
        while start < len(body):
            floor = reach.earliest_end(start) if reach is not None else None
            if reach is not None and floor is None:
                break  # no run from here on holds every statement the pattern names
            hit = _match_at(pattern.statements, body, start, floor) if _may_start(first, body[start]) else None
            if hit is None:
                start += 1
                continue
            end, bindings = hit
            found.append(StatementMatch(block, start, end, bindings))
            start = max(end, start + 1)
    return found


class _Reach:
    """Where each statement of a pattern could match in a body, to bound the runs that can match it."""

    def __init__(self, patterns: Sequence[cst.BaseStatement], body: Sequence[cst.BaseStatement]) -> None:
        self.steps: list[list[int] | None] = []  # per pattern statement: the places it could match; None: any one
        for pattern in patterns:
            if sequence_metavariable(pattern) is not None:
                continue  # any run, even an empty one
            if single_metavariable(pattern) is not None:
                self.steps.append(None)
                continue
            # Each on its own, without the bindings of the others: a place
            # missing here cannot take part in any match.
            self.steps.append([i for i, node in enumerate(body) if _may_start(pattern, node)
                               and match(pattern, node) is not None])
        self.size = len(body)

    def earliest_end(self, start: int) -> int | None:
        """The least end of a run from START that could match, or None if no run from START on can."""
        at = start
        for places in self.steps:
            if places is None:
                at += 1
                if at > self.size:
                    return None
                continue
            index = bisect.bisect_left(places, at)
            if index == len(places):
                return None
            at = places[index] + 1
        return at


def _may_start(pattern: cst.BaseStatement, node: cst.BaseStatement) -> bool:
    """Whether NODE can match the pattern statement PATTERN, judged on node types and assigned names.

    A necessary condition, far cheaper than match(): most statements of a
    scope differ from a pattern's first one in kind or in the name they
    assign, and the search skips them without matching.
    """
    if single_metavariable(pattern) is not None or sequence_metavariable(pattern) is not None:
        return True
    if type(pattern) is not type(node):
        return False
    if type(pattern) is not cst.SimpleStatementLine or type(node) is not cst.SimpleStatementLine:
        return True
    small, other = pattern.body, node.body
    if any(single_metavariable(p) is not None or sequence_metavariable(p) is not None for p in small):
        return True  # `$X; ...` may take any statement, `$...X` any number of them
    if len(small) != len(other):
        return False
    for p, n in zip(small, other):
        if type(p) is not type(n):
            return False
        if type(p) is cst.Assign and type(n) is cst.Assign:
            if len(p.targets) != len(n.targets):
                return False
            name, found = p.targets[0].target, n.targets[0].target
            if type(name) is cst.Name and single_metavariable(name) is None:
                if type(found) is not cst.Name or found.value != name.value:
                    return False
    return True


def _match_at(
    patterns: Sequence[cst.BaseStatement], body: Sequence[cst.BaseStatement], start: int, floor: int | None = None
) -> tuple[int, Bindings] | None:
    # Every pattern statement but a `$...X` takes exactly one statement, so
    # runs shorter than their count cannot match, and without a `$...X` only
    # that length can. A first statement that does not match rules out
    # every run from here: check it once rather than once per length.
    fixed = sum(1 for p in patterns if sequence_metavariable(p) is None)
    if fixed == len(patterns):
        end = start + fixed
        bindings = match_sequence(patterns, body[start:end]) if end <= len(body) else None
        return None if bindings is None else (end, bindings)
    if sequence_metavariable(patterns[0]) is None and (
        start >= len(body) or match(patterns[0], body[start]) is None
    ):
        return None
    # Try the shortest run first so a trailing `$...` does not swallow the block
    # (none shorter than FLOOR can match: see _Reach).
    for end in range(max(start + max(fixed, 1), floor or 0), len(body) + 1):
        bindings = match_sequence(patterns, body[start:end])
        if bindings is not None:
            return end, bindings
    return None


def _blocks(scope: cst.CSTNode) -> Iterator[cst.CSTNode]:
    # Blocks sit in code fields only, under compound statements only: the
    # search enters nothing else (exact types, as in _metavariable).
    if type(scope) in (cst.Module, cst.IndentedBlock):
        yield scope
    if not may_hold_blocks(scope):
        return
    for child in child_nodes(scope, code_only=True):
        yield from _blocks(child)


def find_expressions(pattern: cst.BaseExpression, scope: cst.CSTNode) -> list[tuple[cst.CSTNode, Bindings]]:
    """Find every expression in ``scope`` that matches, outermost first."""
    found: list[tuple[cst.CSTNode, Bindings]] = []
    # A pattern that is not a bare $X matches only nodes of its own exact
    # type (see match): the others are not tried. No expression sits in a
    # layout field, so the walk skips them. (A bare $X, which no patch
    # writes, tries every expression: isinstance() against libcst's ABC is
    # slow, but only that rare pattern pays for it.)
    kind = None if single_metavariable(pattern) is not None else type(pattern)

    def visit(node: cst.CSTNode) -> None:
        if type(node) is kind if kind is not None else isinstance(node, cst.BaseExpression):
            bindings = match(pattern, node)
            if bindings is not None:
                found.append((node, bindings))
                return
        for child in child_nodes(node, code_only=True):
            visit(child)

    visit(scope)
    return found


def contains(pattern: Pattern, scope: cst.CSTNode) -> bool:
    """Whether ``scope`` holds the pattern (statements, or an expression anywhere)."""
    if find_statements(pattern, scope):
        return True
    try:
        expression = pattern.expression
    except PatternSyntaxError:
        return False
    return bool(find_expressions(expression, scope))
