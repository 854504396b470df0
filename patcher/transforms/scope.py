"""Find the class or function a qualified name such as ``PagedAttention.forward_decode`` names."""

from __future__ import annotations

import libcst as cst

from ..syntax import child_nodes


class ScopeNotFound(LookupError):
    """The qualified name names nothing in the module."""


def find_scope(module: cst.Module, qualname: str) -> cst.CSTNode:
    """Return the node for ``qualname`` ("" is the whole module), or raise ScopeNotFound."""
    node: cst.CSTNode = module
    walked: list[str] = []
    for part in filter(None, qualname.split(".")):
        candidates = [d for d in _definitions(node) if d.name.value == part]
        where = ".".join(walked) or "the module"
        if not candidates:
            raise ScopeNotFound(f"no class or function '{part}' in {where}")
        if len(candidates) > 1:
            raise ScopeNotFound(f"{len(candidates)} definitions of '{part}' in {where}")
        node = candidates[0]
        walked.append(part)
    return node


def _definitions(node: cst.CSTNode) -> list[cst.FunctionDef | cst.ClassDef]:
    # Definitions may sit under `if TYPE_CHECKING:`/`try:` at module or class
    # level, but never inside a nested function: stop at the first definition.
    found: list[cst.FunctionDef | cst.ClassDef] = []
    body = node.body if isinstance(node, (cst.ClassDef, cst.FunctionDef)) else node
    for child in child_nodes(body):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            found.append(child)
        elif not isinstance(child, cst.BaseExpression):
            found.extend(_definitions(child))
    return found
