"""Find nodes of a module's ``ast`` fast, and name what they are: the syntax every rule reads.

``SyntaxIndex`` holds every node by kind, with its parent, from one walk of
the tree; the helpers read a node the way the rules need (``dotted`` names,
the name a call calls, constant integers). Only the stdlib ``ast`` here:
``base`` (which parses a file) and ``reachability`` (which judges its
branches) both build on it.
"""

from __future__ import annotations

import ast
import functools
import unicodedata
from typing import Sequence, TypeVar


def identifier(name: str) -> str:
    """Return an identifier as Python reads it (NFKC-folded; ``ast`` already folds names, not strings)."""
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def dotted(node: ast.AST | None) -> str:
    """``a.b.c`` for a Name/Attribute chain, else an empty string."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def called_name(call: ast.Call) -> str:
    """The last name of what ``call`` calls: ``ops.paged_attention_v1(...)`` -> paged_attention_v1."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def integer_value(node: ast.AST) -> int | None:
    """The value of a constant integer expression (``32768``, ``32 * 1024``, ``1 << 15``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = integer_value(node.left), integer_value(node.right)
        if left is None or right is None:
            return None
        operator = type(node.op)
        if operator is ast.Add:
            return left + right
        if operator is ast.Sub:
            return left - right
        if operator is ast.Mult:
            return left * right
        if operator is ast.LShift and 0 <= right < 64:
            return left << right
        if operator is ast.Pow and 0 <= right < 64:
            return int(left**right)
        if operator is ast.FloorDiv and right:
            return left // right
    return None


N = TypeVar("N", bound=ast.AST)

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
TRY = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))  # try/except* is 3.11+


class SyntaxIndex:
    """The nodes of a module by kind, in source order, each with its parent, from one walk."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        found: dict[type, list[ast.AST]] = {}
        parents: dict[int, ast.AST] = {}
        # Iterative and depth-first (source order), so a deeply nested expression cannot hit the
        # recursion limit; reading ``_fields`` directly is twice as fast as ast.iter_child_nodes.
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            same = found.get(type(node))
            if same is None:
                found[type(node)] = [node]
            else:
                same.append(node)
            children: list[ast.AST] = []
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    children.extend(item for item in value if isinstance(item, ast.AST))
                elif isinstance(value, ast.AST) and name != "ctx":  # Load/Store: shared, never looked for
                    children.append(value)
            for child in children:
                parents[id(child)] = node
            children.reverse()
            stack.extend(children)
        self._found = found
        self._parent = parents

    def of(self, kind: type[N]) -> list[N]:
        """Return every node of ``kind`` (exactly that class), in source order."""
        return self._found.get(kind, [])  # type: ignore[return-value]

    def parent(self, node: ast.AST) -> ast.AST | None:
        """Return the node ``node`` sits in (None for the module)."""
        return self._parent.get(id(node))

    def ancestors(self, node: ast.AST) -> tuple[ast.AST, ...]:
        """Return the nodes ``node`` sits in, the module first, its parent last."""
        chain = []
        parent = self._parent.get(id(node))
        while parent is not None:
            chain.append(parent)
            parent = self._parent.get(id(parent))
        return tuple(reversed(chain))

    @functools.cached_property
    def _calls(self) -> dict[str, list[ast.Call]]:
        by_name: dict[str, list[ast.Call]] = {}
        for call in self.of(ast.Call):
            by_name.setdefault(called_name(call), []).append(call)
        return by_name

    def calls(self, name: str, inside: ast.AST | None = None) -> list[ast.Call]:
        """Calls of ``name`` (bare or as an attribute), optionally only those inside ``inside``."""
        return [call for call in self._calls.get(name, [])
                if inside is None or contains(self.ancestors(call), inside)]


def contains(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Whether ``node`` is one of ``ancestors`` (by identity: equal-looking nodes are different places)."""
    return any(a is node for a in ancestors)


def function_of(index: SyntaxIndex, node: ast.AST) -> ast.AST | None:
    """Return the innermost function, lambda or class ``node`` sits in (None at module level)."""
    for ancestor in reversed(index.ancestors(node)):
        if isinstance(ancestor, SCOPES):
            return ancestor
    return None
