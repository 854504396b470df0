"""Rewrite a tree at nodes found by a search, keeping everything else as it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import libcst as cst

from ..syntax import ancestor_ids, may_hold_blocks


@dataclass(frozen=True)
class BodyEdit:
    """Replace ``block.body[start:end]`` by ``statements`` (an empty run inserts)."""

    start: int
    end: int
    statements: tuple[cst.BaseStatement, ...]


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
    """Keep the comments and blank lines around replaced code on its replacement."""
    if not removed or not added:
        return tuple(added)
    added = list(added)
    first = added[0]
    leading = [*leading_lines(removed[0]), *leading_lines(first)]
    added[0] = first.with_changes(leading_lines=leading)
    last, old_last = added[-1], removed[-1]
    if (
        isinstance(last, cst.SimpleStatementLine)
        and isinstance(old_last, cst.SimpleStatementLine)
        and old_last.trailing_whitespace.comment is not None
        and last.trailing_whitespace.comment is None
    ):
        added[-1] = last.with_changes(trailing_whitespace=old_last.trailing_whitespace)
    return tuple(added)


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
        # Right to left, so earlier indices stay valid.
        for edit in sorted(edits, key=lambda e: e.start, reverse=True):
            body[edit.start : edit.end] = edit.statements
        if not body and isinstance(updated, cst.IndentedBlock):
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated.with_changes(body=body)

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
