"""Read the parts of ``class PagedAttention`` that the decode and prefill rules reason about."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Mapping

from .base import PythonSource
from .syntax_index import FUNCTIONS, SCOPES, SyntaxIndex, dotted, integer_value

CLASS = "PagedAttention"

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class PagedAttentionClass:
    """A ``class PagedAttention`` body: its methods and class attributes, by name."""

    node: ast.ClassDef
    methods: Mapping[str, Function]
    attributes: Mapping[str, ast.stmt]  # name -> the Assign/AnnAssign defining it

    def attribute_value(self, name: str) -> ast.expr | None:
        """The expression a class attribute is set to, if it is set."""
        statement = self.attributes.get(name)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            return statement.value
        return None


def classes(index: SyntaxIndex, name: str = CLASS) -> Iterator[PagedAttentionClass]:
    """Every ``class PagedAttention`` of the module, at any depth."""
    for node in index.of(ast.ClassDef):
        if node.name != name:
            continue
        methods: dict[str, Function] = {}
        attributes: dict[str, ast.stmt] = {}
        for statement in node.body:
            if isinstance(statement, FUNCTIONS):
                methods[statement.name] = statement
            else:
                for target in _assigned(statement):
                    attributes[target] = statement
        yield PagedAttentionClass(node, methods, attributes)


def _assigned(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


@dataclass(frozen=True)
class GuardedCall:
    """A call and the threshold test that leads to it (None when no test does)."""

    call: ast.Call
    chain: tuple[ast.AST, ...]  # from the function down to the call's parent
    threshold: ast.expr | None  # what the length is compared with: X._PYTORCH_DECODE_THRESHOLD or a literal
    test: ast.expr | None  # the comparison holding it

    @property
    def unconditional(self) -> bool:
        """Whether the call sits in the function's own block, under no ``if``/loop/``try``/``with``."""
        return not any(isinstance(node, _CONDITIONAL) for node in self.chain[1:])


_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, *SCOPES, ast.IfExp,
                ast.BoolOp, ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def guarded_calls(source: PythonSource, function: Function, callee: str, attribute: str) -> list[GuardedCall]:
    """Each call of ``callee`` in ``function``, with the ``length > threshold`` test it runs under.

    A test counts when the call is in the ``if`` branch of ``x > T`` /
    ``x >= T`` / ``T < x`` (possibly one operand of ``and``), or in the
    ``else`` branch of ``x <= T`` / ``x < T``, where ``T`` is the class
    attribute ``attribute`` (through any object, e.g. ``PagedAttention.`` or
    ``cls.``) or an integer literal. The test may be a local flag set to
    such a comparison (``use_pytorch = n > T`` then ``if use_pytorch:``;
    see ``Reachability.value_of``).
    """
    index = source.index
    result = []
    for call in index.calls(callee, inside=function):
        full_chain = index.ancestors(call)
        chain = full_chain[next(i for i, node in enumerate(full_chain) if node is function):]
        threshold = test = None
        for parent, child in zip(chain, (*chain[1:], call)):
            if isinstance(parent, ast.If) and threshold is None and child is not parent.test:
                test = resolved(source, parent.test, parent)
                found = _above(test, attribute, in_body=any(s is child for s in parent.body))
                if found is not None:
                    threshold, test = found
        result.append(GuardedCall(call, chain, threshold, test))
    return result


def resolved(source: PythonSource, test: ast.expr, at: ast.AST) -> ast.expr:
    """Return ``test`` with a local flag replaced by the comparison it was set to (``not flag`` too)."""
    if isinstance(test, ast.Name):
        value = source.reachability.value_of(test.id, at)
        return value if value is not None else test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        value = source.reachability.value_of(test.operand.id, at)
        return ast.UnaryOp(ast.Not(), value) if value is not None else test
    return test


_ABOVE = (ast.Gt, ast.GtE)
_BELOW = (ast.Lt, ast.LtE)


def _above(test: ast.expr, attribute: str, *, in_body: bool) -> tuple[ast.expr, ast.Compare] | None:
    """The threshold ``test`` compares a length above (in its body) or not above (in its else), and the comparison."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _above(test.operand, attribute, in_body=not in_body)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and in_body:
        for value in test.values:
            found = _above(value, attribute, in_body=True)
            if found is not None:
                return found
        return None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    operator, left, right = test.ops[0], test.left, test.comparators[0]
    upward, downward = (_ABOVE, _BELOW) if in_body else (_BELOW, _ABOVE)
    if isinstance(operator, upward) and is_threshold(right, attribute):
        return right, test
    if isinstance(operator, downward) and is_threshold(left, attribute):
        return left, test
    return None


def is_threshold(node: ast.expr, attribute: str) -> bool:
    """Whether ``node`` is the threshold attribute (``X.attr`` or bare) or an integer literal."""
    if integer_value(node) is not None:
        return True
    name = dotted(node)
    return bool(name) and name.split(".")[-1] == attribute
