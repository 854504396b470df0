"""Walk libcst trees through their nodes' fields, sharing one notion of "layout only".

libcst's ``node.children`` and its visitors rebuild or revisit every node
they pass; reading the dataclass fields directly is what makes searching
and checking a 500-line module cheap.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Callable, TypeGuard

import libcst as cst

# Fields that carry layout only: two nodes that differ just here are the same code,
# and no pattern or rule looks for anything inside them.
LAYOUT_FIELDS = frozenset({
    "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
    "semicolon", "equal", "indent", "newline", "trailing_whitespace", "first_colon",
    "second_colon", "default_indent", "default_newline", "has_trailing_newline", "encoding",
    "leading_whitespace", "trailing_comma",  # `if a:  b()`, `case {"k": v, **rest,}`
})


def is_layout_field(name: str) -> bool:
    """Whether a node field holds only whitespace, comments or punctuation."""
    return name in LAYOUT_FIELDS or name.startswith("whitespace")


_ALL_FIELDS: dict[type, tuple[str, ...]] = {}
_CODE_FIELDS: dict[type, tuple[str, ...]] = {}


def field_names(node: cst.CSTNode, *, code_only: bool = False) -> tuple[str, ...]:
    """The node's field names (cached per type: dataclasses.fields() rebuilds its answer each call)."""
    cache = _CODE_FIELDS if code_only else _ALL_FIELDS
    names = cache.get(type(node))
    if names is None:
        fields = dataclasses.fields(node)
        names = cache[type(node)] = tuple(
            f.name for f in fields if not (code_only and is_layout_field(f.name)))
    return names


def is_node(value: object) -> TypeGuard[cst.CSTNode]:
    """Whether VALUE is a libcst node (as ``isinstance(value, cst.CSTNode)``, cached per type)."""
    # CSTNode is an ABC: isinstance() against it runs Python code on every
    # call, and walks and matches ask it hundreds of thousands of times.
    known = _NODE_TYPES.get(type(value))
    return _learn_node_type(type(value)) if known is None else known


_NODE_TYPES: dict[type, bool] = {}


def _learn_node_type(kind: type) -> bool:
    """Judge KIND once and remember it (the lookups inline ``_NODE_TYPES.get``)."""
    known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


def child_nodes(node: cst.CSTNode, *, code_only: bool = False) -> list[cst.CSTNode]:
    """The direct children of ``node``; with ``code_only``, none of its layout."""
    read = _READERS.get((type(node), code_only))
    if read is None:
        read = _READERS[(type(node), code_only)] = _reader(field_names(node, code_only=code_only))
    children: list[cst.CSTNode] = []
    known = _NODE_TYPES
    for value in read(node):
        kind = type(value)
        # Exact types and plain dict lookups: libcst holds sequences as lists
        # or tuples, and this runs for every field of every node a walk passes.
        if kind is list or kind is tuple:
            for item in value:  # type: ignore[attr-defined]
                is_child = known.get(type(item))
                if is_child is None:
                    is_child = _learn_node_type(type(item))
                if is_child:
                    children.append(item)
        else:
            is_child = known.get(kind)
            if is_child is None:
                is_child = _learn_node_type(kind)
            if is_child:
                children.append(value)  # type: ignore[arg-type]
    return children


def _reader(names: tuple[str, ...]) -> Callable[[cst.CSTNode], tuple[object, ...]]:
    """Read the fields NAMES of a node in one call (attrgetter runs in C; walks call this per node)."""
    if not names:
        return lambda node: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda node: (one(node),)
    return operator.attrgetter(*names)


_READERS: dict[tuple[type, bool], Callable[[cst.CSTNode], tuple[object, ...]]] = {}


def ancestor_ids(
    root: cst.CSTNode,
    is_target: Callable[[cst.CSTNode], bool],
    *,
    enter: Callable[[cst.CSTNode], bool] | None = None,
) -> set[int]:
    """Return the ``id()`` of every node under ROOT (itself included) with a target below it.

    A visitor that enters only these nodes (``on_visit`` returning False
    elsewhere) still sees every target, but libcst rebuilds just the path
    to each one instead of the whole module. ENTER, if given, says which
    nodes can hold a target at all; the search skips the rest. Targets are
    code: whitespace, comments and punctuation (the layout fields) are not
    searched, which halves the nodes a search visits.
    """
    found: set[int] = set()

    def walk(node: cst.CSTNode) -> bool:
        holds = False
        if enter is None or enter(node):
            for child in child_nodes(node, code_only=True):
                if walk(child) or is_target(child):
                    holds = True
        if holds:
            found.add(id(node))
        return holds

    walk(root)
    return found


def may_hold_blocks(node: cst.CSTNode) -> bool:
    """Whether an IndentedBlock can sit below NODE (never inside an expression or a simple statement)."""
    kind = type(node)
    known = _HOLDS_BLOCKS.get(kind)
    if known is None:  # cached per type, as in is_node
        known = _HOLDS_BLOCKS[kind] = not issubclass(kind, _NO_BLOCKS_BELOW)
    return known


_HOLDS_BLOCKS: dict[type, bool] = {}


_NO_BLOCKS_BELOW = (
    cst.BaseExpression,
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.BaseSmallStatement,
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
)
