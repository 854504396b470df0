"""Read the parts of ``class PagedAttention`` that the decode and prefill rules reason about."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

import libcst as cst

from .base import SyntaxIndex, dotted, identifier, integer_value

CLASS = "PagedAttention"


@dataclass(frozen=True)
class PagedAttentionClass:
    """A ``class PagedAttention`` body: its methods and class attributes, by name."""

    node: cst.ClassDef
    methods: Mapping[str, cst.FunctionDef]
    attributes: Mapping[str, cst.BaseSmallStatement]  # name -> the Assign/AnnAssign defining it

    def attribute_value(self, name: str) -> cst.BaseExpression | None:
        """The expression a class attribute is set to, if it is set."""
        statement = self.attributes.get(name)
        if isinstance(statement, (cst.Assign, cst.AnnAssign)):
            return statement.value
        return None


def classes(index: SyntaxIndex, name: str = CLASS) -> Iterator[PagedAttentionClass]:
    """Every ``class PagedAttention`` of the module, at any depth."""
    for node, _ in index.of(cst.ClassDef):
        if identifier(node.name.value) != name:
            continue
        methods: dict[str, cst.FunctionDef] = {}
        attributes: dict[str, cst.BaseSmallStatement] = {}
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef):
                methods[identifier(statement.name.value)] = statement
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    for target in _assigned(small):
                        attributes[target] = small
        yield PagedAttentionClass(node, methods, attributes)


def _assigned(small: cst.BaseSmallStatement) -> list[str]:
    if isinstance(small, cst.Assign):
        return [identifier(t.target.value) for t in small.targets if isinstance(t.target, cst.Name)]
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
        return [identifier(small.target.value)]
    return []


@dataclass(frozen=True)
class GuardedCall:
    """A call and the threshold test that leads to it (None when no test does)."""

    call: cst.Call
    chain: tuple[cst.CSTNode, ...]  # from the function's body down to the call's parent
    threshold: cst.BaseExpression | None  # what the length is compared with: X._PYTORCH_DECODE_THRESHOLD or a literal
    test: cst.BaseExpression | None  # the comparison holding it

    @property
    def unconditional(self) -> bool:
        """Whether the call sits in the function's own block, under no ``if``/loop/``try``/``with``."""
        return not any(isinstance(node, _CONDITIONAL) for node in self.chain)


_CONDITIONAL = (cst.If, cst.For, cst.While, cst.Try, cst.With, cst.FunctionDef, cst.Lambda, cst.IfExp,
                cst.BooleanOperation, cst.Match)


def guarded_calls(index: SyntaxIndex, function: cst.FunctionDef, callee: str, attribute: str) -> list[GuardedCall]:
    """Each call of ``callee`` in ``function``, with the ``length > threshold`` test it runs under.

    A test counts when the call is in the ``if`` branch of ``x > T`` /
    ``x >= T`` / ``T < x`` (possibly one operand of ``and``), or in the
    ``else`` branch of ``x <= T`` / ``x < T``, where ``T`` is the class
    attribute ``attribute`` (through any object, e.g. ``PagedAttention.`` or
    ``cls.``) or an integer literal.
    """
    result = []
    for call, full_chain in index.calls(callee, inside=function.body):
        chain = full_chain[next(i for i, node in enumerate(full_chain) if node is function.body):]
        threshold = test = None
        for parent, child in zip(chain, (*chain[1:], call)):
            if isinstance(parent, cst.If) and threshold is None:
                found = _above(parent.test, attribute, in_body=child is parent.body)
                if found is not None:
                    threshold, test = found
        result.append(GuardedCall(call, chain, threshold, test))
    return result


_ABOVE = (cst.GreaterThan, cst.GreaterThanEqual)
_BELOW = (cst.LessThan, cst.LessThanEqual)


def _above(test: cst.BaseExpression, attribute: str, *,
           in_body: bool) -> tuple[cst.BaseExpression, cst.Comparison] | None:
    """The threshold ``test`` compares a length above (in its body) or not above (in its else), and the comparison."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and in_body:
        return _above(test.left, attribute, in_body=True) or _above(test.right, attribute, in_body=True)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    operator, left, right = target.operator, test.left, target.comparator
    upward, downward = (_ABOVE, _BELOW) if in_body else (_BELOW, _ABOVE)
    if isinstance(operator, upward) and is_threshold(right, attribute):
        return right, test
    if isinstance(operator, downward) and is_threshold(left, attribute):
        return left, test
    return None


def is_threshold(node: cst.BaseExpression, attribute: str) -> bool:
    """Whether ``node`` is the threshold attribute (``X.attr`` or bare) or an integer literal."""
    if integer_value(node) is not None:
        return True
    name = dotted(node)
    return bool(name) and name.split(".")[-1] == attribute
