"""Fingerprint what a step matched and what each metavariable captured, layout aside.

A pattern can still match after the vendor changed the code it captured
(the V2 call gained an argument, the heuristic differs): the patch applies
and silently carries the new code along. Recording a hash of each match and
each binding lets ``upgrade`` say "applies, but what it captured changed".

The hash is of the stdlib ``ast`` dump of the code, so comments, blank
lines, line breaks inside brackets, CRLF, redundant parentheses and quote
style do not change it; the text kept beside it is ``ast.unparse``'s, one
normal form a reviewer can read.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from typing import Any, Mapping

import libcst as cst

from ..records import MatchPrint, Print, StepPrint
from .base import Operation
from .pattern import Capture, Pattern, find_expressions, find_statements
from .scope import find_scope


def step_print(number: int, step: Operation, module: cst.Module, scope: str) -> StepPrint:
    """Fingerprint what ``step`` matches in ``scope`` of ``module`` (the module before the step runs)."""
    node = find_scope(module, scope)
    matches: list[MatchPrint] = []
    for attribute in ("pattern", "anchor"):
        pattern = getattr(step, attribute, None)
        if isinstance(pattern, Pattern):
            for found in find_statements(pattern, node):
                run = tuple(found.block.body[found.start : found.end])  # type: ignore[attr-defined]
                matches.append(_match_print(run, found.bindings))
    # reuse-buffers captures inside each computation it rewrites.
    for buffer in getattr(step, "buffers", ()):
        for expression, bindings in find_expressions(buffer.compute, node):
            matches.append(_match_print(expression, {f"{buffer.temporary}.{k}": v for k, v in bindings.items()}))
    return StepPrint(number, tuple(matches))


def _match_print(code: Capture, bindings: Mapping[str, Any]) -> MatchPrint:
    named = {name: fingerprint(value) for name, value in bindings.items()
             if ":" not in name and isinstance(value, (cst.CSTNode, tuple))}
    return MatchPrint(fingerprint(code), named)


def fingerprint(capture: Capture) -> Print:
    """Hash a node or run of nodes, layout aside, and keep its normal text."""
    tree, text = _normalise(capture)
    dump = ast.dump(tree, annotate_fields=True, include_attributes=False) if tree is not None else text
    return Print(hashlib.sha256(dump.encode("utf-8")).hexdigest(), text)


def _normalise(capture: Capture) -> tuple[ast.AST | None, str]:
    items = capture if isinstance(capture, tuple) else (capture,)
    if not items:
        return ast.Module(body=[], type_ignores=[]), ""
    if all(isinstance(item, cst.BaseStatement) for item in items):
        text = "\n".join(textwrap.dedent(cst.Module([]).code_for_node(item)) for item in items)
        tree, shown = _parsed(text, "exec", lambda tree: tree)
        if tree is None:  # syntax newer than this Python's ast reads: the code itself, comments aside
            code = (line for line in text.splitlines() if not line.strip().startswith("#"))
            shown = " ".join(" ".join(code).split())
        return tree, shown
    joined = ", ".join(cst.Module([]).code_for_node(_without_comma(item)).strip() for item in items)
    # Try the forms a capture can take: an expression, then arguments or elements.
    forms = [f"(\n{joined}\n)", f"_(\n{joined}\n)", f"[\n{joined}\n]"]
    if any(isinstance(item, cst.Arg) for item in items):
        forms.insert(0, forms.pop(1))  # arguments read back as arguments, not as a tuple
    for wrapped in forms:
        tree, text = _parsed(wrapped, "eval", lambda t: t.body)
        if tree is not None:
            if wrapped.startswith("_("):
                text = text[2:-1]  # the arguments alone
            return tree, text
    return None, " ".join(joined.split())


def _parsed(code: str, mode: str, pick: Any) -> tuple[ast.AST | None, str]:
    try:
        tree = pick(ast.parse(code, mode=mode))
    except SyntaxError:
        return None, ""
    return tree, ast.unparse(tree)


def _without_comma(node: cst.CSTNode) -> cst.CSTNode:
    # A captured argument keeps its own trailing comma; the join adds them back.
    if isinstance(node, (cst.Arg, cst.Element)):
        return node.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node
