"""Parse only the statements a patch series can touch; keep every other one as its source text.

libcst parses about 300 KB a second, and holds the interpreter lock while
it does: a 2 MB target took 7 s of CPU to parse before any patch ran, and
most of a second more each time its code was generated. Yet a patch reads and writes only inside
its scopes (``PagedAttention.forward_decode``), and a pattern can only
match code that holds every name the pattern names. So for a large file:

1. a scanner follows strings, brackets, comments and continuation lines to
   find the file's top-level statements, and the members of each class on
   a scope's path;
2. a statement is parsed if it is on a scope's path (its text names the
   next part of one), or if, for some search of a scope that holds it
   (a step's pattern or anchor, a marker, a requirement, the names and
   computations of ``reuse-buffers``), its text holds every name of one
   statement of that search's pattern (comments and strings count: more
   is parsed, never less). Every other statement becomes an ``Opaque``
   node: its source text, emitted as it was;
3. the opaque statements must compile (``compile()`` on their text, a
   few at a time, which builds no syntax tree), so a file with a syntax
   error anywhere still fails as a whole; the rest is parsed by libcst from
   a skeleton of the file in which each opaque statement is a one-line
   placeholder (a compound one keeps a block of its last block's
   indentation, so the comments after it are filed as libcst files them).

``parse_sparse`` returns None, and the caller parses the whole file, for a
small file, a search of the whole module or of any code (a pattern that
is only metavariables, at the top: it can capture statements that would be
opaque), an operation this module does not know, or anything the scanner
cannot follow. The runner runs the series on the sparse tree and keeps
its result only if every patch applied or was already applied; a failure
is computed again on the whole tree, so every message and closest-code
diagnostic is the one a whole parse gives.
"""

from __future__ import annotations

import bisect
import io
import re
import secrets
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState

from ..transforms.insert import Insert
from ..transforms.pattern import Pattern, sequence_metavariable, single_metavariable
from ..transforms.replace import Replace
from ..transforms.reuse_buffers import ReuseBuffers
from .model import Patch

SPARSE_FROM = 128 * 1024  # bytes: a smaller file is parsed whole (a few tenths of a second)
_CHUNK = 64 * 1024  # opaque text compiled at once


# --------------------------------------------------------------------------- the node


@dataclass(frozen=True)
class Opaque(cst.BaseCompoundStatement):
    """A statement kept as its source text: no search of the series can match in it (see ``parse_sparse``)."""

    text: str  # from its first character of code to the end of its last line, that line's newline excluded
    newline: str  # that newline ("" at the end of a file without one)
    leading_lines: Sequence[cst.EmptyLine] = ()
    footer: Sequence[cst.EmptyLine] = ()  # comment lines after it that belong to its last block
    footer_indent: str | None = None  # that block's indentation, relative to the statement's

    def _visit_and_replace_children(self, visitor: cst.CSTVisitorT) -> "Opaque":
        return self  # nothing inside is a node: a search finds nothing, a transformer changes nothing

    def _codegen_impl(self, state: CodegenState) -> None:
        for line in self.leading_lines:
            line._codegen(state)
        state.add_indent_tokens()
        state.add_token(self.text)
        # Its own token: a file without a final newline pops the last one.
        state.add_token(self.newline or state.default_newline)
        if self.footer:
            state.increase_indent(state.default_indent if self.footer_indent is None else self.footer_indent)
            for line in self.footer:
                line._codegen(state)
            state.decrease_indent()


# --------------------------------------------------------------------------- what the series searches


@dataclass(frozen=True)
class _Search:
    """Where a search looks (a scope, with every block under it) and what a statement must name to be found."""

    scope: tuple[str, ...]
    names: tuple[frozenset[str], ...]  # one set per statement (or expression) of the pattern
    anything: bool = False  # a statement-wide metavariable: it may take any statement, as it is


def _searches(patches: Sequence[Patch]) -> list[_Search] | None:
    """Every search the series makes; None if one looks at the whole module, or is not known here."""
    found: list[_Search] = []
    for patch in patches:
        for marker in (*patch.applied_when, *patch.requires):
            found.append(_pattern_search(marker.scope, marker.pattern))
        for step in patch.steps:
            scope = step.scope or patch.scope
            if type(step) is Replace and step.pattern is not None:
                found.append(_pattern_search(scope, step.pattern))
            elif type(step) is Insert and step.anchor is not None:
                found.append(_pattern_search(scope, step.anchor))
            elif type(step) is ReuseBuffers and step.anchor is not None:
                found.append(_pattern_search(scope, step.anchor))
                for buffer in step.buffers:
                    # The temporary's reads, stores and dels, the buffer's name
                    # (a clash), and the computation each store must match.
                    found.append(_Search(_path(scope), (frozenset({buffer.temporary}), frozenset({buffer.buffer}),
                                                        _names(buffer.compute))))
            else:
                return None  # an operation that may look anywhere
    if any(not search.scope for search in found):
        return None
    return found


def _pattern_search(scope: str, pattern: Pattern) -> _Search:
    names = []
    for statement in pattern.statements:
        if single_metavariable(statement) is not None or sequence_metavariable(statement) is not None:
            return _Search(_path(scope), (), anything=True)
        names.append(_names(statement))
    return _Search(_path(scope), tuple(names))


def _path(scope: str) -> tuple[str, ...]:
    return tuple(filter(None, scope.split(".")))


def _names(node: cst.CSTNode) -> frozenset[str]:
    """The identifiers a node names, metavariables aside: a match holds each of them, spelt the same."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is cst.Name and single_metavariable(item) is None and sequence_metavariable(item) is None:
            found.add(item.value)
        stack.extend(item.children)
    return frozenset(found)


# --------------------------------------------------------------------------- logical lines


class _Unfollowed(ValueError):
    """The scanner cannot follow the file as Python's tokenizer would: parse it whole."""


@dataclass
class _Line:
    """A logical line: from its first physical line's start to just after its last newline."""

    start: int
    code: int  # offset of its first character of code
    end: int
    indent: str


_LINE_END = re.compile(r"\r\n|\n")
_INDENT = re.compile(r"[ \t]*")
_INTERESTING = re.compile(r"""'''|\"\"\"|['"#\\]""")
_STRING_END = {
    "'''": re.compile(r"(?:[^'\\]|\\.|'(?!''))*'''", re.DOTALL),
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL),
    "'": re.compile(r"(?:[^'\\\r\n]|\\(?:\r\n|.))*'", re.DOTALL),
    '"': re.compile(r'(?:[^"\\\r\n]|\\(?:\r\n|.))*"', re.DOTALL),
}


def logical_lines(text: str) -> list[_Line]:
    """Split TEXT into logical lines as Python's tokenizer does; blank and comment-only lines are left out."""
    if "\r" in text.replace("\r\n", "") or "\f" in text or "\0" in text:
        raise _Unfollowed("a lone CR, a form feed or a NUL")
    lines: list[_Line] = []
    depth = 0
    at = 0
    size = len(text)
    current: _Line | None = None
    while at < size:
        line_end = _LINE_END.search(text, at)
        stop, code_end = (line_end.end(), line_end.start()) if line_end else (size, size)
        if current is None:
            first = _INDENT.match(text, at, code_end).end()  # type: ignore[union-attr]
            if first == code_end or text[first] == "#":
                at = stop  # blank or a comment alone: no logical line
                continue
            current = _Line(at, first, stop, text[at:first])
        position = at
        continued = False
        while True:
            found = _INTERESTING.search(text, position, code_end)
            segment = text[position : found.start() if found else code_end]
            depth += (segment.count("(") + segment.count("[") + segment.count("{")
                      - segment.count(")") - segment.count("]") - segment.count("}"))
            if depth < 0:
                raise _Unfollowed("a closing bracket without its opening one")
            if found is None:
                break
            token = found.group()
            if token == "#":
                break
            if token == "\\":
                if found.end() == code_end and line_end is not None:
                    continued = True
                    break
                raise _Unfollowed("a backslash outside a string, not at the end of a line")
            closing = _STRING_END[token].match(text, found.end())
            if closing is None:
                raise _Unfollowed("a string that does not end")
            position = closing.end()
            if position > code_end:  # a string over several lines: go on from the line it ends on
                line_end = _LINE_END.search(text, position)
                stop, code_end = (line_end.end(), line_end.start()) if line_end else (size, size)
        at = stop
        if depth == 0 and not continued:
            current.end = stop
            lines.append(current)
            current = None
    if current is not None:
        raise _Unfollowed("the file ends inside a statement")
    return lines


# --------------------------------------------------------------------------- statements


@dataclass
class _Unit:
    """One statement of a block: its logical lines, decorators and else/elif/except/finally clauses included."""

    lines: list[_Line]
    name: str | None = None  # a definition's name
    is_class: bool = False
    keep: bool = True  # parsed, rather than opaque
    members: list["_Unit"] | None = None  # a kept class whose own statements are decided one by one

    @property
    def start(self) -> int:
        return self.lines[0].start

    @property
    def end(self) -> int:
        return self.lines[-1].end


_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_DEFINITION = re.compile(r"(?:async[ \t]+def|def|class)[ \t]+([^\W\d]\w*)")


class _Splitter:
    """Split a text's blocks into statements, and decide which of them a series needs parsed."""

    def __init__(self, text: str, searches: list[_Search]) -> None:
        self.text = text
        self.searches = searches
        words = {w for s in searches for names in s.names for w in names} | {p for s in searches for p in s.scope}
        self.places = _places(text, words)

    def units(self, lines: list[_Line]) -> list[_Unit]:
        """Group the logical lines of a block (all at or below its first line's indentation) into statements."""
        indent = lines[0].indent
        units: list[_Unit] = []
        pending: list[_Line] = []  # decorators, waiting for their definition
        for line in lines:
            if line.indent != indent:
                if not line.indent.startswith(indent) or not (units or pending):
                    raise _Unfollowed("an indentation the block does not have")
                (pending or units[-1].lines).append(line)
                continue
            if pending:
                pending.append(line)
                if not self.text.startswith("@", line.code):
                    units.append(self.unit(pending))
                    pending = []
            elif self.text.startswith("@", line.code):
                pending = [line]
            elif units and _CLAUSE.match(self.text, line.code):
                units[-1].lines.append(line)
            else:
                units.append(self.unit([line]))
        if pending:
            raise _Unfollowed("a decorator with nothing to decorate")
        return units

    def unit(self, lines: list[_Line]) -> _Unit:
        header = self.header(lines)
        found = _DEFINITION.match(self.text, lines[header].code)
        if found is None:
            return _Unit(lines)
        return _Unit(lines, found.group(1), self.text.startswith("class", lines[header].code))

    def header(self, lines: list[_Line]) -> int:
        """The index of a statement's first line that is not a decorator."""
        return next(i for i, line in enumerate(lines) if not self.text.startswith("@", line.code))

    def holds(self, unit: _Unit) -> set[str]:
        """The searched words that occur in the unit's text (in code, a string or a comment alike)."""
        return {word for word, places in self.places.items() if _any_within(places, unit.start, unit.end)}

    def decide(self, units: list[_Unit], prefix: tuple[str, ...]) -> None:
        """Mark which statements of the block at PREFIX (a scope path) must be parsed; split the classes that can be."""
        depth = len(prefix)
        here = [s for s in self.searches if prefix[: len(s.scope)] == s.scope]  # searches holding this block
        anything = any(s.anything for s in here)
        onward = {s.scope[depth] for s in self.searches if len(s.scope) > depth and s.scope[:depth] == prefix}
        for unit in units:
            held = self.holds(unit)
            matchable = anything or any(names <= held for s in here for names in s.names)
            unit.keep = matchable or bool(onward & held)
            if not unit.keep or matchable or not unit.is_class or unit.name not in onward:
                continue
            # A class on a scope's path that no search here can match as a
            # whole: its own statements are decided one by one.
            body = unit.lines[self.header(unit.lines) + 1 :]
            if body:
                members = self.units(body)
                self.decide(members, (*prefix, str(unit.name)))
                if not all(member.keep for member in members):
                    unit.members = members


def _places(text: str, words: Iterable[str]) -> dict[str, list[int]]:
    """Where each word occurs in TEXT as a whole identifier, in order."""
    found: dict[str, list[int]] = {word: [] for word in words}
    if found:
        alternatives = "|".join(map(re.escape, sorted(found, key=len, reverse=True)))
        for match in re.finditer(rf"(?<!\w)(?:{alternatives})(?!\w)", text):
            found[match.group()].append(match.start())
    return found


def _any_within(places: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_left(places, start)
    return index < len(places) and places[index] < end


# --------------------------------------------------------------------------- the skeleton


@dataclass
class _Skeleton:
    """The text libcst parses: kept statements as they are, each other one as a placeholder."""

    text: str
    token: str
    first_indent: str  # the file's first indented line's indentation, which libcst takes as the module's
    first_indent_at: int  # and where that line starts (-1: no such line)
    parts: list[str] = field(default_factory=list)
    opaque: dict[str, tuple[_Unit, _Unit]] = field(default_factory=dict)  # placeholder -> the first and last it stands for
    chunks: list[tuple[str, str]] = field(default_factory=list)  # (indentation, opaque statements' code) to compile

    def lay(self, units: list[_Unit], start: int, end: int) -> None:
        """Lay out TEXT[start:end], which holds UNITS: each run of opaque statements becomes one placeholder."""
        at = start
        run: list[_Unit] = []
        for unit in [*units, None]:
            if unit is not None and not unit.keep:
                run.append(unit)
                continue
            if run:
                self.parts.append(self.text[at : run[0].start])
                self.parts.append(self.placeholder(run[0], run[-1]))
                at = run[-1].end
                run = []
            if unit is None:
                break
            self.parts.append(self.text[at : unit.start])
            if unit.members is None:
                self.parts.append(self.text[unit.start : unit.end])
            else:
                self.parts.append(self.text[unit.start : unit.members[0].start])
                self.lay(unit.members, unit.members[0].start, unit.end)
            at = unit.end
        self.parts.append(self.text[at:end])

    def placeholder(self, first: _Unit, last: _Unit) -> str:
        """Lines standing for the statements FIRST to LAST, with the blocks that matter around them.

        The last statement's last block decides which comment lines after
        it are its own (those indented deeper); the file's first indented
        line, if it is in these statements, sets the module's indentation.
        """
        name = f"__patcher_opaque_{self.token}_{len(self.opaque)}__"
        self.opaque[name] = (first, last)
        indent = first.lines[0].indent
        newline = _newline(self.text, last.end)
        self.compile_later(indent, indent + self.text[first.lines[0].code : last.end - len(newline)] + "\n")
        # (In a class, the placeholder's own line is already as deep as that line.)
        sets = self.first_indent if not indent and first.start <= self.first_indent_at < last.end else None
        ends = None
        if last.lines[-1].indent != indent:
            heads = [i for i, line in enumerate(last.lines) if line.indent == indent]
            ends = last.lines[heads[-1] + 1].indent
        nl = newline or "\n"
        if sets is None and ends is None:
            text = f"{indent}{name}{nl}"
        elif sets is None:
            text = f"{indent}if {name}:{nl}{ends}pass{nl}"
        else:
            text = f"{indent}if {name}:{nl}{sets}pass{nl}{indent}else:" + (f"{nl}{ends}pass{nl}" if ends else f" pass{nl}")
        return text[: -len(nl)] + newline

    def compile_later(self, indent: str, code: str) -> None:
        """Queue CODE to compile, with its neighbours at the same indentation (members in a class of their own)."""
        if self.chunks and self.chunks[-1][0] == indent and len(self.chunks[-1][1]) < _CHUNK:
            self.chunks[-1] = (indent, self.chunks[-1][1] + code)
        else:
            self.chunks.append((indent, ("class _:\n" if indent else "") + code))


def _newline(text: str, end: int) -> str:
    if text.endswith("\r\n", 0, end):
        return "\r\n"
    return "\n" if text.endswith("\n", 0, end) else ""


# --------------------------------------------------------------------------- parsing


def parse_sparse(source: bytes, patches: Sequence[Patch]) -> cst.Module | None:
    """Parse SOURCE keeping as text every statement no search of PATCHES can touch; None to parse it whole."""
    if len(source) < SPARSE_FROM:
        return None
    try:
        searches = _searches(patches)
    except Exception:  # a patch that does not build fails where the whole parse's run builds it
        return None
    if searches is None:
        return None
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
        text = source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None  # the whole parse says what is wrong
    try:
        lines = logical_lines(text)
        if not lines:
            return None
        splitter = _Splitter(text, searches)
        units = splitter.units(lines)
        splitter.decide(units, ())
    except _Unfollowed:
        return None
    token = secrets.token_hex(4)
    while f"__patcher_opaque_{token}_" in text:
        token = secrets.token_hex(4)
    indented = next((line for line in lines if line.indent), None)
    skeleton = _Skeleton(text, token, indented.indent if indented else "", indented.start if indented else -1)
    skeleton.lay(units, 0, len(text))
    if not skeleton.opaque:
        return None
    for _, chunk in skeleton.chunks:
        try:
            compile(chunk, "<opaque>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
            return None  # perhaps only out of its context: the whole parse decides
    try:
        module = cst.parse_module("".join(skeleton.parts))
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    # The file's own settings, which a skeleton reproduces (else: parse it whole).
    indent = indented.indent if indented else "    "
    first_newline = re.search(r"\r\n?|\n", text)
    if (module.default_indent, module.default_newline, module.has_trailing_newline) != (
            indent, first_newline.group() if first_newline else "\n", text.endswith("\n")):
        return None
    return module.with_changes(encoding=encoding, body=_filled(module.body, skeleton.opaque, text))


def _filled(body: Sequence[cst.BaseStatement], opaque: dict[str, tuple[_Unit, _Unit]],
            text: str) -> list[cst.BaseStatement]:
    """BODY with an Opaque node in each placeholder's place, classes' bodies included."""
    out: list[cst.BaseStatement] = []
    for statement in body:
        run = opaque.get(_placeholder_name(statement) or "")
        if run is not None:
            first, last = run[0].lines[0], run[1].lines[-1]
            newline = _newline(text, last.end)
            footer: Sequence[cst.EmptyLine] = ()
            indent = None
            if type(statement) is cst.If:
                block = statement.orelse.body if type(statement.orelse) is cst.Else else statement.body
                if type(block) is cst.IndentedBlock:
                    footer, indent = block.footer, block.indent
            out.append(Opaque(text[first.code : last.end - len(newline)], newline,
                              getattr(statement, "leading_lines", ()), footer, indent))
        elif type(statement) is cst.ClassDef and type(statement.body) is cst.IndentedBlock:
            inner = _filled(statement.body.body, opaque, text)
            changed = any(a is not b for a, b in zip(inner, statement.body.body))
            out.append(statement.with_changes(body=statement.body.with_changes(body=inner)) if changed else statement)
        else:
            out.append(statement)
    return out


def _placeholder_name(statement: cst.BaseStatement) -> str | None:
    if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
        small = statement.body[0]
        if type(small) is cst.Expr and type(small.value) is cst.Name:
            return small.value.value
    if type(statement) is cst.If and type(statement.test) is cst.Name:
        return statement.test.value
    return None
