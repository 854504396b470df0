"""Say where a pattern that found no match came closest, so a failure points at the code.

A pattern of statements is compared with every run of statements in the
scope that starts at some statement: the run that matches the most leading
pattern statements is the closest, ties going to the one whose first
differing statement differs from the pattern's in the fewest tokens. The
answer names the run's line range and that statement, pattern text against
code text, both written the way ``ast.unparse`` writes them (one line, no
comments), so layout never shows up as a difference.

When the scope itself is missing, the existing scopes with the closest
names are listed instead.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import re
import textwrap
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Collection, Iterator, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState  # what Module.code generates with (lines counted, see _LineState)

from ..linediff import opcodes
from ..records import Closest, Diagnostic
from ..syntax import child_nodes, may_hold_blocks
from .pattern import EMPTY, Bindings, Pattern, decode_metavariables, match, match_sequence, sequence_metavariable

_TOKEN = re.compile(r"\w+|\S")
_SHOWN = 100  # characters of a statement shown in a message


def find_closest(pattern: Pattern, module: cst.Module, scope: cst.CSTNode,
                 original: cst.Module | None = None) -> Closest | None:
    """Find the run of statements in ``scope`` (a node of ``module``) closest to ``pattern``.

    ``module`` may be ``original`` (the file as read) with earlier steps of
    the patch applied: lines are then reported in ``original``, and runs
    that start in code those steps wrote come last, since the vendor's code
    is what the pattern was written against.
    """
    patterns = pattern.statements
    positions = _positions(module)
    line_of = _original_lines(module, original)
    best: tuple[int, int, int, int, float, int, int, cst.CSTNode] | None = None
    for block in _blocks(scope):
        body = list(block.body)  # type: ignore[attr-defined]
        leading = _leading_table(patterns, body)
        for start in range(len(body)):
            matched, stop = leading[start] if leading is not None else _leading(patterns, body, start, EMPTY)
            if matched == len(patterns):
                continue  # a full match: not what failed (a count mismatch); nothing to point at
            if best is not None and (0, -matched) > best[:2]:
                continue
            code = body[stop] if stop < len(body) else None
            tokens, unlike = _closeness(patterns[matched], code)
            # The same kind of statement (an assignment for an assignment) beats a shorter other one.
            ours = int(line_of(body[start], positions[body[start]][0])[1])
            candidate = (ours, -matched, int(_kind(patterns[matched]) != _kind(code)), tokens, unlike,
                         start, stop, block)
            if best is None or candidate[:5] < best[:5]:
                best = candidate
    if best is None:
        return None
    matched, tokens, start, stop, block = -best[1], best[3], best[5], best[6], best[7]
    body = list(block.body)  # type: ignore[attr-defined]
    end_node = body[min(stop, len(body) - 1)]
    first = positions[body[start]][0]
    last = positions[end_node][1]
    first, last = line_of(body[start], first)[0], line_of(end_node, last, end=True)[0]
    last = max(first, last)
    path, pattern_at, code_at = _descend(patterns[matched], body[stop] if stop < len(body) else None)
    return Closest(first, last, matched + 1, "" if pattern_at is None else one_line(pattern_at),
                   "" if code_at is None else one_line(code_at), matched, tokens, ", ".join(path))


def step_patterns(step: object) -> list[Pattern]:
    """The statement patterns a step looks for, in the order it looks: its pattern or anchor, then any others.

    reuse-buffers also looks for each temporary's assignment
    (``m_blk = $S.amax(dim=-1)``): when that is what finds nothing, that is
    the pattern whose closest code a failure names.
    """
    found = [p for p in (getattr(step, "pattern", None), getattr(step, "anchor", None)) if isinstance(p, Pattern)]
    for buffer in getattr(step, "buffers", ()):
        assignment = cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Name(buffer.temporary))], value=buffer.compute)])
        text = f"{buffer.temporary} = {decode_metavariables(cst.Module([]).code_for_node(buffer.compute))}"
        found.append(Pattern(source=text, statements=(assignment,)))
    return found


def _descend(pattern: cst.CSTNode, code: cst.CSTNode | None
             ) -> tuple[tuple[str, ...], cst.CSTNode | None, cst.CSTNode | None]:
    """Find where inside two compound statements of the same kind they part (their headers may agree).

    Returns the path there ("else", "statement 2", ...) and the pattern and
    code statements at that point (None where one block ended first).
    """
    if code is None or type(pattern) is not type(code) or not isinstance(pattern, cst.BaseCompoundStatement):
        return (), pattern, code
    if _tokens_apart(_header(pattern), _header(code)):
        return (), pattern, code  # the header differs: that is where they part, whatever the blocks hold
    theirs, ours = _suites(pattern), _suites(code)
    if [label for label, _ in theirs] != [label for label, _ in ours]:
        return (), pattern, code  # an else or a handler more or less: the statement as a whole differs
    for (label, wanted), (_, found) in zip(theirs, ours):
        matched, stop = _leading(wanted, found, 0, EMPTY)
        if matched < len(wanted):
            path, inner_pattern, inner_code = _descend(wanted[matched], found[stop] if stop < len(found) else None)
            return (f"{label}, statement {matched + 1}", *path), inner_pattern, inner_code
        if stop < len(found) and not (wanted and sequence_metavariable(wanted[-1]) is not None):
            # More code than pattern; a trailing `$...X` would have taken it (a
            # run in a body may stop anywhere, a whole block may not).
            return (f"{label}, statement {stop + 1}",), None, found[stop]
    return (), pattern, code  # the blocks agree (what differs is a metavariable's reach)


def _suites(node: cst.CSTNode) -> list[tuple[str, list[cst.BaseStatement]]]:
    """Return the blocks of a compound statement in source order, each with its label."""
    out: list[tuple[str, list[cst.BaseStatement]]] = []
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        out.append(("in its body", _units(body)))
    for number, handler in enumerate(getattr(node, "handlers", ()), 1):
        out.append((f"in except handler {number}", _units(handler.body)))
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.Else):
        out.append(("in its else", _units(orelse.body)))
    elif isinstance(orelse, cst.If):
        out.append(("in its elif", [orelse]))
    final = getattr(node, "finalbody", None)
    if isinstance(final, cst.Finally):
        out.append(("in its finally", _units(final.body)))
    return out


def _units(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    # `if x: y` and its indented form hold the same statements (as pattern.py compares them).
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=[statement]) for statement in suite.body]
    assert isinstance(suite, cst.IndentedBlock)
    return list(suite.body)


def close_scopes(module: cst.Module, qualname: str, limit: int = 3) -> tuple[str, ...]:
    """Name the classes and functions in ``module`` whose qualified names are closest to ``qualname``."""
    names = list(qualified_names(module))
    near = difflib.get_close_matches(qualname, names, n=limit, cutoff=0.5)
    if not near:
        # A renamed method keeps its class: compare the last part alone too.
        last = qualname.rsplit(".", 1)[-1]
        by_last = {name.rsplit(".", 1)[-1]: name for name in names}
        near = [by_last[n] for n in difflib.get_close_matches(last, list(by_last), n=limit, cutoff=0.5)]
    return tuple(near)


def qualified_names(node: cst.CSTNode, prefix: str = "") -> Iterator[str]:
    """Yield every class and function under ``node`` by qualified name, outermost first."""
    for child in child_nodes(node, code_only=True):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            name = f"{prefix}{child.name.value}"
            yield name
            yield from qualified_names(child.body, name + ".")
        elif may_hold_blocks(child) and not isinstance(child, cst.BaseExpression):
            yield from qualified_names(child, prefix)


def one_line(node: cst.CSTNode) -> str:
    """Write a statement as ``ast.unparse`` does, on one line (a compound statement's header, then '...')."""
    text = cst.Module([]).code_for_node(node)
    try:
        tree = ast.parse(textwrap.dedent(text))
        shown = ast.unparse(tree)
    except SyntaxError:
        shown = "\n".join(line for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))
    lines = [line for line in shown.splitlines() if line.strip()]
    head = lines[0].strip() if lines else ""
    if len(lines) > 1:
        head += " ..."
    # An anonymous metavariable reads back as '$_' (decoding alone gives '$'), '$...' as written.
    head = decode_metavariables(head.replace("__pv____", "$_"))
    return head if len(head) <= _SHOWN else head[: _SHOWN - 3] + "..."


def _leading_table(patterns: Sequence[cst.BaseStatement],
                   body: Sequence[cst.BaseStatement]) -> list[tuple[int, int]] | None:
    """``_leading(patterns, body, start, EMPTY)`` for every start at once, for a pattern that opens with a run.

    A leading ``$...X`` lets a run from any start take any length, so the
    search from every start would try every length: quadratic in a block,
    each try naming the differing statement's tokens. What the rest of the
    pattern makes of each place does not depend on where the run began
    (unless the rest uses X again: then None, and each start is searched),
    so each place is tried once and each start takes the best place at or
    after it, as ``_leading`` would: the first place where the rest
    matches whole, else the most statements matched, then the fewest
    differing tokens, then the earliest place.
    """
    first = patterns[0]
    name = sequence_metavariable(first)
    if name is None or len(patterns) == 1 or _names_in(patterns[1:], name):
        return None
    rest = patterns[1:]
    table: list[tuple[int, int]] = [(0, 0)] * (len(body) + 1)
    best: tuple[int, int, int] | None = None  # (matched, tokens, place) of the best place at or after
    whole: tuple[int, int] | None = None  # (matched, stop) at the first place at or after where the rest matches
    for place in range(len(body), -1, -1):
        matched, stop = _leading(rest, body, place, EMPTY)
        if matched == len(rest):
            whole = (matched + 1, stop)
        else:
            tokens = _difference(rest[matched], body[stop] if stop < len(body) else None)[0]
            if best is None or (matched, -tokens) >= (best[0], -best[1]):
                best = (matched, tokens, stop)
        table[place] = whole if whole is not None else ((best[0] + 1, best[2]) if best is not None else (1, place))
    return table[: len(body)]


def _names_in(patterns: Sequence[cst.CSTNode], name: str) -> bool:
    """Whether any of PATTERNS uses the metavariable NAME (as ``$NAME`` or ``$...NAME``)."""
    wanted = {f"__pv_{name}__", f"__pvs_{name}__"}
    stack: list[cst.CSTNode] = list(patterns)
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value in wanted:
            return True
        stack.extend(child_nodes(node))
    return False


def _leading(patterns: Sequence[cst.BaseStatement], body: Sequence[cst.BaseStatement], at: int,
             bindings: Bindings) -> tuple[int, int]:
    """Count the leading ``patterns`` that match from ``body[at]`` on; say where the code stopped matching."""
    if not patterns:
        return 0, at
    first = patterns[0]
    if sequence_metavariable(first) is not None:
        # The run `$...X` takes that lets the most pattern statements match;
        # among those, the one whose next statement is least unlike the
        # pattern's, so that the difference named is the one that matters.
        best, unlike = (1, at), -1
        for length in range(len(body) - at + 1):
            bound = match_sequence([first], body[at : at + length], bindings)
            if bound is None:
                continue
            matched, stop = _leading(patterns[1:], body, at + length, bound)
            if matched == len(patterns) - 1:
                return matched + 1, stop  # all of it: the shortest run that does
            tokens = _difference(patterns[1 + matched], body[stop] if stop < len(body) else None)[0]
            if matched + 1 > best[0] or (matched + 1 == best[0] and (unlike < 0 or tokens < unlike)):
                best, unlike = (matched + 1, stop), tokens
        return best
    if at >= len(body):
        return 0, at
    bound = match(first, body[at], bindings)
    if bound is None:
        return 0, at
    matched, stop = _leading(patterns[1:], body, at + 1, bound)
    return matched + 1, stop


@lru_cache(maxsize=4096)
def _difference(pattern: cst.CSTNode, code: cst.CSTNode | None) -> tuple[int, float]:
    """Count differing tokens, then (for ties) measure how unlike the texts are character by character.

    Kept per pair of nodes (both immutable): every start of a search meets
    the same statements again. Diffs are linediff's: difflib's answer for a
    statement of ordinary size, near-linear for a huge one (a class).
    """
    text = _full(pattern)
    # A metavariable matches any code: only the pattern's own tokens can differ.
    theirs = [t for t in _TOKEN.findall(text) if not t.startswith("__pv")]
    if code is None:
        return len(theirs), 1.0
    other = _full(code)
    ours = _TOKEN.findall(other)
    differ = 0
    for tag, i1, i2, j1, j2 in opcodes(theirs, ours):
        if tag != "equal":
            differ += max(i2 - i1, j2 - j1)
    same = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes(text, other) if tag == "equal")
    total = len(text) + len(other)
    return differ, 1.0 - (2.0 * same / total if total else 1.0)


def _closeness(pattern: cst.CSTNode, code: cst.CSTNode | None) -> tuple[int, float]:
    """Rank CODE against a pattern statement: differing tokens, then how unlike the texts are.

    Two compound statements of one kind are compared header to header and
    block to block, a metavariable standing for whatever code it faces: a
    loop whose header lost an argument but whose body holds all the pattern
    asks for is closer than one with a look-alike header and none of it.
    """
    difference = _difference(pattern, code)
    if code is None or type(pattern) is not type(code) or not isinstance(pattern, cst.BaseCompoundStatement):
        return difference
    theirs, ours = _suites(pattern), _suites(code)
    if [label for label, _ in theirs] != [label for label, _ in ours]:
        return difference  # an else or a handler more or less: compared whole
    tokens = _tokens_apart(_header(pattern), _header(code))
    for (_, wanted), (_, found) in zip(theirs, ours):
        tokens += _tokens_apart("\n".join(map(_full, wanted)), "\n".join(map(_full, found)))
    return tokens, difference[1]


def _header(node: cst.CSTNode) -> str:
    """A compound statement without its blocks (decorators and ``for ... :`` lines), as ``ast.unparse`` writes it."""
    text = _full(node)
    try:
        statement = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return text.split("\n", 1)[0]
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        if isinstance(getattr(statement, field, None), list):
            setattr(statement, field, [])
    return ast.unparse(statement)


def _tokens_apart(pattern_text: str, code_text: str) -> int:
    """Count the tokens two texts differ by, where a metavariable of the pattern stands for any code."""
    theirs, ours = _TOKEN.findall(pattern_text), _TOKEN.findall(code_text)
    apart = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, theirs, ours, autojunk=False).get_opcodes():
        if tag != "equal" and not all(t.startswith("__pv") for t in theirs[i1:i2]) or tag == "insert":
            apart += max(i2 - i1, j2 - j1)
    return apart


def _kind(node: cst.CSTNode | None) -> type | None:
    if isinstance(node, cst.SimpleStatementLine) and node.body:
        return type(node.body[0])
    return None if node is None else type(node)


def _full(node: cst.CSTNode) -> str:
    text = cst.Module([]).code_for_node(node)
    try:
        return ast.unparse(ast.parse(textwrap.dedent(text)))
    except SyntaxError:
        return text


def _blocks(scope: cst.CSTNode) -> Iterator[cst.CSTNode]:
    # A one-line suite (`def f(x): return g(x)`) is a block too: its statements
    # are candidates, so a scope that holds any statement names one.
    if isinstance(scope, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)):
        yield scope
    if not may_hold_blocks(scope):
        return
    for child in child_nodes(scope):
        yield from _blocks(child)


def _positions(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    """The first and last line of every node of MODULE, as libcst's PositionProvider gives them.

    Lines alone, kept as two ints per node: the provider's CodeRange of
    line and column per node, made for every node of a large file, cost
    most of the closest-code search there (six times what this does).
    """
    state = _LineState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return state.ranges


class _LineState(CodegenState):
    """Generate code counting lines; record each node's lines as PositionProvidingCodegenState records its range.

    A node that records a syntactic position (a statement: from after its
    leading lines to the end of its last small statement or block, start
    and end taken from the nodes it names) keeps that; any other keeps the
    lines its whole code spans.
    """

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.line = 1
        self.ranges: dict[cst.CSTNode, tuple[int, int]] = {}
        self._starts: list[int] = []

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            self.line += len(_NEWLINES.findall(value))

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.line)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.ranges:
            self.ranges[node] = (start, self.line)

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> Iterator[None]:
        start = self.line
        try:
            yield
        finally:
            end = self.line
            if start_node is not None:
                start = self.ranges[start_node][0]
            if end_node is not None:
                end = self.ranges[end_node][1]
            self.ranges[node] = (start, end)


_NEWLINES = re.compile(r"\r\n?|\n")


def _original_lines(module: cst.Module, original: cst.Module | None) -> Callable[..., tuple[int, bool]]:
    """Map a line of ``module`` at a node to ``original``'s line, and say whether the patch wrote it there."""
    if original is None or original is module:
        return lambda node, line, end=False: (line, False)
    # Statements no step rewrote are the very same nodes in both trees (edits
    # rebuild only the path to what they change): take their lines from there.
    known = _positions(original)
    mapper = line_mapper(original.code, module.code)
    written = written_lines(original.code, module.code)

    def line_of(node: cst.CSTNode, line: int, end: bool = False) -> tuple[int, bool]:
        if node in known:
            return known[node][1 if end else 0], False
        return mapper(line, end), line in written

    return line_of


def line_mapper(before: str, after: str) -> Callable[..., int]:
    """Map a 1-based line of ``after`` back to the line of ``before`` it came from (or next to).

    A line the change wrote maps to the first line it replaced, or the line
    after the place it was added; with ``end``, to the last line it replaced,
    or the line before that place: a range that ends in new code still ends
    within the old code it stands for.
    """
    old, new = before.splitlines(), after.splitlines()
    codes = opcodes(old, new)
    starts = [j1 for _, _, _, j1, _ in codes]

    def back(line: int, end: bool = False) -> int:
        index = line - 1
        # The opcode holding the line: found by bisection, not a walk over every opcode.
        at = bisect.bisect_right(starts, index) - 1
        for tag, i1, i2, j1, j2 in codes[max(at, 0) :]:
            if j1 <= index < j2:
                if tag == "equal":
                    return i1 + (index - j1) + 1
                return max(i2 if end else i1 + 1, 1)
        return len(old)

    return back


def written_lines(before: str, after: str) -> frozenset[int]:
    """List the 1-based lines of ``after`` that a change wrote (not lines of ``before``)."""
    old, new = before.splitlines(), after.splitlines()
    return frozenset(j + 1 for tag, _, _, j1, j2 in opcodes(old, new) if tag in ("replace", "insert")
                     for j in range(j1, j2))
