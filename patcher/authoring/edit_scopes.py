"""Find what a hand edit changed: runs of statements, each in the smallest block that holds it.

Two versions of a file are compared block by block, from the module down.
The statements of a block are aligned on their text (comments above them
included); a compound statement whose header is unchanged (the statement
with the bodies of its own blocks left out) is entered and its blocks
compared in turn, so a change deep inside a function is found as the few
statements that changed there, not as the function. What does not align
is a ``Change``: the run of original statements and the run of edited
statements that take its place (either may be empty).

``substitute`` puts chosen changes into the original tree, which gives the
file as it is after those changes alone: the learner checks each step it
writes against that.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import libcst as cst

from ..syntax import child_nodes
from ..transforms.splice import BodyEdit, edit_bodies

Block = cst.CSTNode  # an IndentedBlock or the Module: what holds a run of statements


@dataclass(frozen=True)
class Level:
    """A compound statement that encloses a change, in the original and in the edited file."""

    original: cst.BaseCompoundStatement
    edited: cst.BaseCompoundStatement
    original_block: Block  # the block holding the statement
    edited_block: Block
    original_index: int  # its place in that block
    edited_index: int
    block_number: int  # which of its own blocks (body, else, handlers...) holds the change


@dataclass(frozen=True)
class Change:
    """``original_block.body[start:end]`` became ``edited_block.body[edited_start:edited_end]``."""

    original_block: Block
    edited_block: Block
    start: int
    end: int
    edited_start: int
    edited_end: int
    levels: tuple[Level, ...]  # every compound statement from the module down to the block, outermost first

    @property
    def removed(self) -> tuple[cst.BaseStatement, ...]:
        """The original statements of the run."""
        return tuple(self.original_block.body[self.start:self.end])  # type: ignore[attr-defined]

    @property
    def added(self) -> tuple[cst.BaseStatement, ...]:
        """The edited statements that take their place."""
        return tuple(self.edited_block.body[self.edited_start:self.edited_end])  # type: ignore[attr-defined]


class EditNotExpressible(Exception):
    """The files differ where no statement run can say it (comments outside every statement)."""


def find_changes(original: cst.Module, edited: cst.Module) -> list[Change]:
    """List the changed statement runs, in the order they appear in the file."""
    if node_code(_header_only(original)) != node_code(_header_only(edited)):
        raise EditNotExpressible("the comments or blank lines at the top of the file changed")
    if _lines_code(original.footer) != _lines_code(edited.footer):
        raise EditNotExpressible("the comments or blank lines at the end of the file changed")
    changes: list[Change] = []
    _diff_blocks(original, edited, (), changes)
    return changes


def substitute(original: cst.Module, changes: Iterable[Change]) -> cst.Module:
    """Return the original module with each change's edited statements put in place of its run."""
    edits: dict[int, list[BodyEdit]] = {}
    for change in changes:
        edits.setdefault(id(change.original_block), []).append(
            BodyEdit(change.start, change.end, change.added))
    return edit_bodies(original, edits) if edits else original


def node_code(node: cst.CSTNode | Sequence[cst.BaseStatement], indent: str = "    ") -> str:
    """Return the code of a node (or a run of statements) as it reads at the left margin, with LF newlines."""
    if not isinstance(node, cst.CSTNode):
        return "".join(node_code(statement, indent) for statement in node)
    key = (id(node), indent)
    kept = _CODE.get(key)
    if kept is not None and kept[0] is node:
        return kept[1]
    code = cst.Module(body=[], default_indent=indent, default_newline="\n").code_for_node(node)
    if len(_CODE) >= _CODE_KEPT:
        _CODE.pop(next(iter(_CODE)))
    _CODE[key] = (node, code)  # the node is held, so its id stays its own
    return code


def forget_code() -> None:
    """Drop the code kept for nodes (and the nodes with it), once a learning run is done."""
    _CODE.clear()


# Nodes are immutable: the same node always reads the same. Learning asks
# for the code of the same statements many times (keys, neighbours, runs).
_CODE: dict[tuple[int, str], tuple[cst.CSTNode, str]] = {}
_CODE_KEPT = 8192


def own_blocks(statement: cst.CSTNode) -> list[cst.IndentedBlock]:
    """The indented blocks a compound statement owns (body, else, elif, handlers, finally), in order."""
    found: list[cst.IndentedBlock] = []

    def walk(node: cst.CSTNode) -> None:
        for child in child_nodes(node, code_only=True):
            if type(child) is cst.IndentedBlock:
                found.append(child)
            elif isinstance(child, (cst.Else, cst.If, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally,
                                    cst.MatchCase)):
                walk(child)

    walk(statement)
    return found


def replace_blocks(statement: cst.CSTNode, bodies: Mapping[int, Sequence[cst.BaseStatement]]) -> cst.CSTNode:
    """Return ``statement`` with the body of each own block ``id() -> statements`` replaced."""
    return statement.visit(_BlockBodies(bodies))  # type: ignore[return-value]


class _BlockBodies(cst.CSTTransformer):
    def __init__(self, bodies: Mapping[int, Sequence[cst.BaseStatement]]):
        super().__init__()
        self.bodies = bodies

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.bodies

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        body = self.bodies.get(id(original))
        return updated if body is None else updated.with_changes(body=list(body))


def skeleton(statement: cst.BaseStatement) -> str:
    """The statement's code with the bodies of its own blocks left out: its header(s), comments included."""
    if type(statement) is cst.SimpleStatementLine:
        return node_code(statement)
    placeholder = [cst.SimpleStatementLine(body=[cst.Expr(cst.Ellipsis())])]
    return node_code(replace_blocks(statement, {id(block): placeholder for block in own_blocks(statement)}))


def _diff_blocks(original: Block, edited: Block, levels: tuple[Level, ...], changes: list[Change]) -> None:
    old = list(original.body)  # type: ignore[attr-defined]
    new = list(edited.body)  # type: ignore[attr-defined]
    matcher = difflib.SequenceMatcher(None, [skeleton(s) for s in old], [skeleton(s) for s in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changes.append(Change(original, edited, i1, i2, j1, j2, levels))
            continue
        for offset in range(i2 - i1):
            a, b = old[i1 + offset], new[j1 + offset]
            if type(a) is cst.SimpleStatementLine:
                continue  # its skeleton is all of it
            # Same header (and comments): look inside each of its blocks,
            # which costs no more than comparing their code would.
            for number, (inner_a, inner_b) in enumerate(zip(own_blocks(a), own_blocks(b))):
                level = Level(a, b, original, edited, i1 + offset, j1 + offset, number)
                _diff_blocks(inner_a, inner_b, (*levels, level), changes)


def _header_only(module: cst.Module) -> cst.Module:
    return cst.Module(body=[], header=module.header, default_newline="\n")


def _lines_code(lines: Sequence[cst.EmptyLine]) -> str:
    return cst.Module(body=[], footer=list(lines), default_newline="\n").code
