"""Rewrite a tree at nodes found by a search, keeping everything else as it was.

Comments of replaced code. A run of statements that a step replaces keeps
what it had around it:

- the comment and blank lines above its first statement go above the
  replacement's first statement (before the template's own comments),
  unless a capture puts that statement back, wherever in the replacement:
  then they stay with it;
- its end-of-line comment goes beside the replacement: for a run of one
  statement that is the comment on its first line (a compound statement's
  header, ``if x:  # why``), put beside the replacement's first line, since
  that is the line which took the old line's place; for a longer run it is
  the comment on its last statement, put beside the replacement's last
  statement. A header's comment goes beside the header of a compound
  replacement (``for ...:  # 32 blocks a tile`` stays on the new ``for``).
  A simple line's comment does not go beside a header, where it would read
  as a remark on the condition or loop: like any comment whose place is
  taken by the replacement's own comment, it goes on a line of its own
  right above that statement. A comment that a capture already brings
  back (``$S`` put the old statement back) is not repeated.
- a block left with no statement gets ``pass``, which keeps the removed
  runs' comments above it and the last run's end-of-line comment beside
  it; an emptied module keeps them as comment lines.

Comments inside a run (between its statements, inside its blocks) belong
to the replaced code and go with it, unless a capture puts them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import libcst as cst

from ..syntax import ancestor_ids, may_hold_blocks


@dataclass(frozen=True)
class BodyEdit:
    """Replace ``block.body[start:end]`` by ``statements`` (an empty run inserts).

    With ``relined``, the statement at ``start`` follows ``statements``, as
    edits inside it left it, with those lines above it instead of its own
    (an insert before it must not undo a match nested in it).
    """

    start: int
    end: int
    statements: tuple[cst.BaseStatement, ...]
    relined: tuple[cst.EmptyLine, ...] | None = None


def edit_bodies(module: cst.Module, edits: Mapping[int, Sequence[BodyEdit]]) -> cst.Module:
    """Apply body edits keyed by ``id()`` of the IndentedBlock or Module they edit."""
    result = module.visit(_BodyEditor(edits, ancestor_ids(module, lambda node: id(node) in edits, enter=may_hold_blocks)))
    assert isinstance(result, cst.Module)
    return result


def replace_nodes(module: cst.Module, replacements: Mapping[int, cst.CSTNode],
                  within: cst.CSTNode | None = None) -> cst.Module:
    """Replace nodes keyed by ``id()`` of the original node; all of them below WITHIN, if given.

    WITHIN (a class or function of MODULE, or a block) saves searching the
    rest of the module's expressions for the nodes.
    """
    if within is None or within is module:
        path = ancestor_ids(module, lambda node: id(node) in replacements)
    else:
        path = ancestor_ids(module, lambda node: node is within, enter=may_hold_blocks)
        assert id(module) in path, "'within' must be a class, function or block of the module"
        path |= ancestor_ids(within, lambda node: id(node) in replacements)
    result = module.visit(_NodeReplacer(replacements, path))
    assert isinstance(result, cst.Module)
    return result


def move_comments(
    removed: Sequence[cst.BaseStatement], added: Sequence[cst.BaseStatement]
) -> tuple[cst.BaseStatement, ...]:
    """Keep the comments and blank lines around replaced code on its replacement.

    See the module's docstring for where each comment goes.
    """
    if not removed or not added:
        return tuple(added)
    added = list(added)
    # A capture that puts the first statement back (anywhere in the
    # replacement) brings its lines above along: moving them too would print
    # them twice.
    captured_first = _holds(added, removed[0])
    trailing = run_comment(removed)
    index = 0 if len(removed) == 1 else -1
    if trailing is not None and not _holds(added, removed[index]):
        from_header = not isinstance(removed[index], cst.SimpleStatementLine)
        added[index] = _attach(added[index], trailing, from_header)
    if not captured_first:
        first = added[0]
        added[0] = first.with_changes(leading_lines=[*leading_lines(removed[0]), *leading_lines(first)])
    return tuple(added)


def run_comment(run: Sequence[cst.BaseStatement]) -> cst.TrailingWhitespace | None:
    """Return the end-of-line comment that belongs to a run of statements as a whole, if any.

    For one statement it is the comment on its first line (a compound
    statement's header); for several, the last one's if it is one line.
    """
    if len(run) == 1:
        return line_comment(run[0])
    last = run[-1]
    if isinstance(last, cst.SimpleStatementLine) and last.trailing_whitespace.comment is not None:
        return last.trailing_whitespace
    return None


def line_comment(statement: cst.BaseStatement) -> cst.TrailingWhitespace | None:
    """Return the whitespace and comment that end a statement's first line, if it has a comment."""
    if isinstance(statement, cst.SimpleStatementLine):
        whitespace = statement.trailing_whitespace
    else:
        found = _header(statement)
        if found is None:
            return None
        whitespace = found[0]
    return whitespace if whitespace.comment is not None else None


def _header(statement: cst.BaseStatement) -> tuple[cst.TrailingWhitespace, Callable[[cst.TrailingWhitespace], cst.BaseStatement]] | None:
    # A compound statement's header line ending, and how to give it another.
    if isinstance(statement, cst.Match):
        return statement.whitespace_after_colon, lambda new: statement.with_changes(whitespace_after_colon=new)
    body = getattr(statement, "body", None)  # if, for, while, with, try, def, class
    if isinstance(body, cst.IndentedBlock):
        return body.header, lambda new: statement.with_changes(body=body.with_changes(header=new))
    if isinstance(body, cst.SimpleStatementSuite):
        return body.trailing_whitespace, lambda new: statement.with_changes(body=body.with_changes(trailing_whitespace=new))
    return None


def _attach(statement: cst.BaseStatement, trailing: cst.TrailingWhitespace, from_header: bool) -> cst.BaseStatement:
    # Beside a free simple line; beside a free header if the comment was on a
    # header too; else on a line of its own right above the statement.
    if isinstance(statement, cst.SimpleStatementLine):
        if statement.trailing_whitespace.comment is None:
            return statement.with_changes(trailing_whitespace=trailing)
    elif from_header:
        found = _header(statement)
        if found is not None and found[0].comment is None:
            return found[1](trailing)
    assert trailing.comment is not None
    return statement.with_changes(leading_lines=[*leading_lines(statement), cst.EmptyLine(comment=trailing.comment)])


def _holds(statements: Sequence[cst.BaseStatement], old: cst.BaseStatement) -> bool:
    # True when a capture put the statement OLD itself (and so its comment) back.
    found = _StatementFinder(old)
    for statement in statements:
        statement.visit(found)
        if found.seen:
            return True
    return False


class _StatementFinder(cst.CSTVisitor):
    def __init__(self, statement: cst.BaseStatement):
        super().__init__()
        self.statement = statement
        self.seen = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.statement:
            self.seen = True
        return not self.seen and may_hold_blocks(node)


def emptied_block_comments(
    runs: Sequence[Sequence[cst.BaseStatement]],
) -> tuple[list[cst.EmptyLine], cst.TrailingWhitespace | None]:
    """Return the lines above, and the comment beside, the ``pass`` that stands for removed RUNS (none empty).

    Each run keeps its lines above and its own end-of-line comment, in
    source order; the last run's comment goes beside the ``pass``, the
    others on lines of their own.
    """
    lines: list[cst.EmptyLine] = []
    trailing: cst.TrailingWhitespace | None = None
    for run in runs:
        if trailing is not None:
            lines.append(cst.EmptyLine(comment=trailing.comment))
        lines.extend(leading_lines(run[0]))
        trailing = run_comment(run)
    return lines, trailing


def leading_lines(statement: cst.BaseStatement) -> list[cst.EmptyLine]:
    """The comment and blank lines above a statement (every statement kind has them)."""
    return list(getattr(statement, "leading_lines", ()))


class _Pruned(cst.CSTTransformer):
    """A transformer that enters only the nodes on the way to an edit.

    libcst rebuilds every node it enters; entering the whole module for
    each edit made one patch cost a second.
    """

    def __init__(self, path: set[int]):
        super().__init__()
        self.path = path

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.path


class _BodyEditor(_Pruned):
    def __init__(self, edits: Mapping[int, Sequence[BodyEdit]], path: set[int]):
        super().__init__(path)
        self.edits = edits

    def _edit(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        edits = self.edits.get(id(original))
        if not edits:
            return updated
        body = list(updated.body)  # type: ignore[attr-defined]
        edits = sorted(edits, key=lambda e: e.start)
        removed = [body[edit.start : edit.end] for edit in edits]
        # Right to left, so earlier indices stay valid.
        for edit in reversed(edits):
            kept = () if edit.relined is None else (body[edit.start].with_changes(leading_lines=edit.relined),)
            body[edit.start : edit.end] = (*edit.statements, *kept)
        if body:
            return updated.with_changes(body=body)
        lines, trailing = emptied_block_comments(removed)
        if isinstance(updated, cst.IndentedBlock):
            empty = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=lines)
            if trailing is not None:
                empty = empty.with_changes(trailing_whitespace=trailing)
            return updated.with_changes(body=[empty])
        # An emptied module keeps the comments as lines of its own.
        if trailing is not None:
            lines.append(cst.EmptyLine(comment=trailing.comment))
        assert isinstance(updated, cst.Module)
        return updated.with_changes(body=[], footer=[*lines, *updated.footer])

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.BaseSuite:
        return self._edit(original, updated)  # type: ignore[return-value]

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return self._edit(original, updated)  # type: ignore[return-value]


class _NodeReplacer(_Pruned):
    def __init__(self, replacements: Mapping[int, cst.CSTNode], path: set[int]):
        super().__init__(path)
        self.replacements = replacements

    def on_leave(  # type: ignore[override]  # returns nodes of other types by design
        self, original: cst.CSTNode, updated: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        return self.replacements.get(id(original), updated)
