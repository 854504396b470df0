"""Find the class or function a qualified name such as ``PagedAttention.forward_decode`` names."""

from __future__ import annotations

import libcst as cst

from ..syntax import child_nodes, may_hold_blocks


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
    # Nor inside an expression or a simple statement: those are not entered.
    found: list[cst.FunctionDef | cst.ClassDef] = []
    body = node.body if type(node) in _DEFINITIONS else node  # type: ignore[attr-defined]
    for child in child_nodes(body, code_only=True):
        if type(child) in _DEFINITIONS:
            found.append(child)  # type: ignore[arg-type]
        elif may_hold_blocks(child):
            found.extend(_definitions(child))
    return found


_DEFINITIONS = (cst.ClassDef, cst.FunctionDef)  # exact types: isinstance() against libcst's ABCs is slow
