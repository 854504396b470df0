"""Write a run of changed statements as a pattern and a template, generalising what the edit did not touch.

Generalisations, each made only where it is unambiguous:

- an argument list that reads the same before and after the edit (one call
  in the original run, one call in the edited run, the same code and the
  same layout) becomes ``$...NAME`` in both, so the template carries the
  vendor's arguments through;
- the literals of a statement the edit left as it was (one such line in the
  original run, one in the edited run) become ``$NAME`` in both;
- in an anchor, which the template does not reuse, the bodies of compound
  statements become ``$...``, argument lists ``$...`` and literals ``$_``.

Whether a generalised pattern is still unique, and whether the template
gives exactly the edited code, is not judged here: the learner runs each
candidate through the real operations (see ``from_edit``).
"""

from __future__ import annotations

import enum
import re
from typing import Callable, Iterator, Sequence

import libcst as cst

from ..syntax import child_nodes
from ..transforms.pattern import decode_metavariables, encode_metavariables, same_code
from ..transforms.splice import leading_lines, line_comment, run_comment
from .edit_scopes import node_code, own_blocks, replace_blocks

_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


class Level(enum.IntEnum):
    """How far a pattern is generalised: bodies, argument lists and literals; down to not at all."""

    NONE = 0
    ARGUMENTS = 1
    ALL = 2
    BODIES = 3  # also the blocks of a statement whose header alone changed


def replace_texts(removed: Sequence[cst.BaseStatement], added: Sequence[cst.BaseStatement],
                  level: Level, indent: str) -> tuple[str, str] | None:
    """Return (pattern, template) for replacing REMOVED by ADDED, or None when they cannot be written.

    The template leaves out what ``replace`` itself puts back: the comment and
    blank lines above the run, and the run's end-of-line comment.
    """
    names = _Names()
    if level >= Level.BODIES:
        removed, added = _capture_bodies(removed, added, names)
    pattern_rewrites, template_rewrites = _Rewrites(), _Rewrites()
    if level >= Level.ARGUMENTS:
        _generalise_calls(removed, added, names, pattern_rewrites, template_rewrites)
    if level >= Level.ALL:
        _generalise_literals(removed, added, names, pattern_rewrites, template_rewrites)
    pattern = [_replaced(s, pattern_rewrites.map) for s in removed]
    template = [_replaced(s, template_rewrites.map) for s in added]
    code = _template_code(removed, template, indent)
    text = _pattern_code(pattern, indent)
    if code is None or text is None:
        return None
    return text, code


def anchor_text(anchor: Sequence[cst.BaseStatement], level: Level, bodies: bool, indent: str) -> str | None:
    """Return the pattern for an insert's anchor, generalised to LEVEL (``bodies``: blocks become ``$...``)."""
    replacements: dict[int, cst.CSTNode] = {}
    if bodies:
        for statement in anchor:
            blocks = own_blocks(statement)
            if blocks:
                anything = [_statement_metavariable("$...")]
                replacements[id(statement)] = replace_blocks(statement, {id(b): anything for b in blocks})
    statements = [replacements.get(id(s), s) for s in anchor]
    inner = _Rewrites()
    if level >= Level.ARGUMENTS:
        for call in _preorder(statements, cst.Call):
            if call.args and not inner.covers(call):  # type: ignore[attr-defined]
                inner.add(call, call.with_changes(args=[cst.Arg(_name("$..."))],
                                                  whitespace_before_args=cst.SimpleWhitespace("")))
    if level >= Level.ALL:
        for literal in list(_literals(statements, inner.covers)):
            inner.add(literal, _name("$_"))
    return _pattern_code([_replaced(s, inner.map) for s in statements], indent)


def insert_code(added: Sequence[cst.BaseStatement], indent: str) -> str | None:
    """Return the code an insert writes: the added statements as edited."""
    return _decoded(node_code(list(added), indent).lstrip("\n"))


def lift(statement: cst.BaseCompoundStatement, block_number: int, start: int, end: int,
         inner: Sequence[cst.BaseStatement], names: "_Names", tag: str) -> cst.BaseCompoundStatement:
    """Return STATEMENT with its block BLOCK_NUMBER's run ``[start:end]`` replaced by INNER, the rest captured.

    The statements before and after the run become ``$...BEFORE`` and
    ``$...AFTER``; the other blocks of the statement ``$...BODY``: a
    pattern and its template built alike carry them through.
    """
    bodies: dict[int, list[cst.BaseStatement]] = {}
    for number, block in enumerate(own_blocks(statement)):
        statements = list(block.body)
        if number != block_number:
            bodies[id(block)] = [_statement_metavariable("$..." + names.new(f"BODY{tag}"))]
            continue
        run = list(inner)
        if start > 0:
            run.insert(0, _statement_metavariable("$..." + names.new(f"BEFORE{tag}")))
        if end < len(statements):
            run.append(_statement_metavariable("$..." + names.new(f"AFTER{tag}")))
        bodies[id(block)] = run
    return replace_blocks(statement, bodies)  # type: ignore[return-value]


class _Names:
    """Hand out metavariable names, each once."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def new(self, base: str) -> str:
        name, number = base, 1
        while name in self.used:
            number += 1
            name = f"{base}_{number}"
        self.used.add(name)
        return name


def fresh_names() -> _Names:
    """A name source for metavariables that a pattern and its template share."""
    return _Names()


# --------------------------------------------------------------------------- generalising


def _capture_bodies(removed: Sequence[cst.BaseStatement], added: Sequence[cst.BaseStatement], names: _Names
                    ) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]]:
    """A statement whose header changed but not its blocks (a new parameter, a decorator): capture the blocks."""
    if len(removed) != 1 or len(added) != 1:
        return list(removed), list(added)
    old, new = removed[0], added[0]
    old_blocks, new_blocks = own_blocks(old), own_blocks(new)
    if not old_blocks or len(old_blocks) != len(new_blocks):
        return list(removed), list(added)
    mine: dict[int, list[cst.BaseStatement]] = {}
    theirs: dict[int, list[cst.BaseStatement]] = {}
    for a, b in zip(old_blocks, new_blocks):
        if node_code(a) == node_code(b):
            body: list[cst.BaseStatement] = [_statement_metavariable("$..." + names.new("BODY"))]
            mine[id(a)], theirs[id(b)] = body, body
    if not mine:
        return list(removed), list(added)
    return [replace_blocks(old, mine)], [replace_blocks(new, theirs)]  # type: ignore[list-item]


def _generalise_calls(removed: Sequence[cst.CSTNode], added: Sequence[cst.CSTNode], names: _Names,
                      pattern: "_Rewrites", template: "_Rewrites") -> None:
    calls = [c for c in _preorder(removed, cst.Call) if c.args]  # type: ignore[attr-defined]
    edited = [c for c in _preorder(added, cst.Call) if c.args]  # type: ignore[attr-defined]
    for call in calls:
        if pattern.covers(call):
            continue
        same_here = [c for c in calls if same_code(c, call)]
        same_there = [c for c in edited if same_code(c, call)]
        if len(same_here) != 1 or len(same_there) != 1:
            continue  # not there, or ambiguous: which one carries which?
        twin = same_there[0]
        if template.covers(twin) or node_code(call) != node_code(twin):
            continue  # laid out otherwise after the edit: carrying it through would undo that
        name = names.new(_call_name(call.func) + "_ARGS")  # type: ignore[attr-defined]
        argument = cst.Arg(_name("$..." + name))
        pattern.add(call, call.with_changes(args=[argument], whitespace_before_args=cst.SimpleWhitespace("")))
        template.add(twin, twin.with_changes(args=[argument], whitespace_before_args=cst.SimpleWhitespace("")))


def _generalise_literals(removed: Sequence[cst.CSTNode], added: Sequence[cst.CSTNode], names: _Names,
                         pattern: "_Rewrites", template: "_Rewrites") -> None:
    lines = list(_preorder(removed, cst.SimpleStatementLine))
    edited = list(_preorder(added, cst.SimpleStatementLine))
    texts = [_line_text(line) for line in lines]
    edited_texts = [_line_text(line) for line in edited]
    for line, text in zip(lines, texts):
        if texts.count(text) != 1 or edited_texts.count(text) != 1:
            continue  # changed by the edit, or ambiguous
        twin = edited[edited_texts.index(text)]
        pairs = list(zip(_literals([line], pattern.covers), _literals([twin], template.covers)))
        for mine, theirs in pairs:
            name = "$" + names.new("LIT")
            pattern.add(mine, _name(name))
            template.add(theirs, _name(name))


def _line_text(line: cst.CSTNode) -> str:
    return node_code(line.with_changes(leading_lines=[]))


def _literals(statements: Sequence[cst.CSTNode], skip: Callable[[cst.CSTNode], bool]) -> Iterator[cst.CSTNode]:
    """Literals that a metavariable may stand for: not a docstring, not in a match case or an f-string."""
    def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        if skip(node) or type(node) in (cst.Match, cst.FormattedString):
            return
        if type(node) is cst.Expr and type(node.value) in _LITERALS + (cst.ConcatenatedString,):
            return  # a docstring: as a metavariable it would stand for any statement
        if type(node) in _LITERALS:
            yield node
            return
        for child in child_nodes(node, code_only=True):
            yield from walk(child)

    for statement in statements:
        yield from walk(statement)


class _Rewrites:
    """Nodes to replace (keyed by ``id()``), and every node inside them, which no longer needs a look."""

    def __init__(self) -> None:
        self.map: dict[int, cst.CSTNode] = {}
        self.covered: set[int] = set()

    def add(self, node: cst.CSTNode, replacement: cst.CSTNode) -> None:
        self.map[id(node)] = replacement
        self.covered.update(id(n) for n in _walk(node))

    def covers(self, node: cst.CSTNode) -> bool:
        return id(node) in self.covered


def _preorder(statements: Sequence[cst.CSTNode], kind: type) -> Iterator[cst.CSTNode]:
    for statement in statements:
        for node in _walk(statement):
            if type(node) is kind:
                yield node


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in child_nodes(node, code_only=True):
        yield from _walk(child)


def _call_name(func: cst.BaseExpression) -> str:
    if type(func) is cst.Name:
        name = func.value
    elif type(func) is cst.Attribute:
        name = func.attr.value
    else:
        name = "CALL"
    name = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "CALL"
    return name if not name[0].isdigit() else "CALL_" + name


# --------------------------------------------------------------------------- text


def _name(metavariable: str) -> cst.Name:
    return cst.Name(encode_metavariables(metavariable))


def _statement_metavariable(metavariable: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(_name(metavariable))])


def _replaced(node: cst.CSTNode, replacements: dict[int, cst.CSTNode]) -> cst.CSTNode:
    if not replacements:
        return node
    if id(node) in replacements:
        return replacements[id(node)]
    return node.visit(_Replacer(replacements))  # type: ignore[return-value]


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode]):
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.replacements

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.replacements.get(id(original), updated)


def _template_code(removed: Sequence[cst.BaseStatement], added: list[cst.CSTNode], indent: str) -> str | None:
    """The added statements as a template, less what ``replace`` moves over from the removed run."""
    if not added:
        return ""
    if removed:
        above, mine = _lines_code(leading_lines(removed[0])), leading_lines(added[0])  # type: ignore[arg-type]
        count = len(leading_lines(removed[0]))
        if _lines_code(mine[:count]) != above:
            return None  # replace would keep the old lines above the run
        added[0] = added[0].with_changes(leading_lines=mine[count:])
        trailing = run_comment(removed)
        index = 0 if len(removed) == 1 else -1
        if trailing is not None:
            own = line_comment(added[index])  # type: ignore[arg-type]
            if own is not None and node_code_of_whitespace(own) == node_code_of_whitespace(trailing):
                added[index] = _without_line_comment(added[index])  # replace puts it back beside the line
    return _decoded(node_code(added, indent).lstrip("\n"))  # type: ignore[arg-type]


def _pattern_code(statements: list[cst.CSTNode], indent: str) -> str | None:
    stripped = [s.visit(_NoComments()) for s in statements]
    return _decoded(node_code(stripped, indent).strip("\n") + "\n")  # type: ignore[arg-type]


def _decoded(code: str) -> str | None:
    """Turn reserved names back into metavariables; None when the code holds a '$' of its own.

    A line break inside a token of a CRLF file (a docstring, a backslash
    continuation) is written LF: the operations give it the target file's
    line ending, as they give every line of the code they write.
    """
    if "$" in code:
        return None  # patterns and templates read any '$' as a metavariable
    code = code.replace(encode_metavariables("$_"), "$_").replace("\r\n", "\n")
    return decode_metavariables(code)


def _lines_code(lines: Sequence[cst.EmptyLine]) -> str:
    return node_code([cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=list(lines))])


def node_code_of_whitespace(whitespace: cst.TrailingWhitespace) -> str:
    """The text of an end-of-line comment with the spaces before it."""
    return cst.Module(body=[]).code_for_node(whitespace)


def _without_line_comment(statement: cst.CSTNode) -> cst.CSTNode:
    bare = cst.TrailingWhitespace()
    if type(statement) is cst.SimpleStatementLine:
        return statement.with_changes(trailing_whitespace=bare)
    body = getattr(statement, "body", None)
    if type(body) is cst.IndentedBlock:
        return statement.with_changes(body=body.with_changes(header=bare))
    if type(body) is cst.SimpleStatementSuite:
        return statement.with_changes(body=body.with_changes(trailing_whitespace=bare))
    return statement


class _NoComments(cst.CSTTransformer):
    """Drop comments and blank lines: a pattern is matched on syntax, and reads better without them."""

    def leave_EmptyLine(self, original: cst.EmptyLine,
                        updated: cst.EmptyLine) -> cst.EmptyLine | cst.RemovalSentinel:
        return cst.RemoveFromParent()

    def leave_TrailingWhitespace(self, original: cst.TrailingWhitespace,
                                 updated: cst.TrailingWhitespace) -> cst.TrailingWhitespace:
        return updated.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
