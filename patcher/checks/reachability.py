"""Find the branches that cannot run, so rules judge only code that can.

A branch is dead when its ``if`` (or ``x if t else y``) test has a value
known from the syntax alone:

- a literal (``if False:``, ``if 0:``, the ``else`` of ``if True:``);
- inside a function, a local whose only reaching assignment is a literal:
  ``use_v1 = True`` and then ``if use_v1:``, with no other binding of the
  name on any path in between;
- ``not`` of such a test, and ``and`` / ``or`` of them where one side decides;
- ``TYPE_CHECKING`` (``typing``'s flag, False when the code runs).

The reasoning is straight-line, read backwards from the test through the
enclosing blocks. Anything that might rebind the name in between makes the
test unknown, and the branch live: an assignment, augmented assignment,
walrus, ``del``, ``for`` target, ``with ... as``, ``except ... as``, an
import, a ``def``/``class`` of that name, anywhere in an earlier statement
(inside its own ``if``/``for``/``try``... too); a binding later in a loop
that holds the test (the back edge); ``global``/``nonlocal`` of the name;
an assignment that is not one plain name set to one literal. At module
level and in class bodies, names are never trusted (other modules can set
them): only literal tests count there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from .syntax_index import FUNCTIONS, SCOPES, TRY, SyntaxIndex, dotted, function_of

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Known:
    """A test's value, and why it is known: ``"`use_v1` is always True here (line 191)"``."""

    value: bool
    why: str


class Reachability:
    """Answer "can this node run?" for one file, caching each test it evaluates."""

    def __init__(self, index: SyntaxIndex):
        self.index = index
        self._tests: dict[int, Known | None] = {}
        self._declared: dict[int, frozenset[str]] = {}

    def _shared(self, function: ast.AST) -> frozenset[str]:
        """Return the names ``global``/``nonlocal`` anywhere in ``function`` (nested functions too)."""
        key = id(function)
        if key not in self._declared:
            self._declared[key] = frozenset(name for n in ast.walk(function)
                                            if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names)
        return self._declared[key]

    def dead(self, node: ast.AST) -> str | None:
        """Say why ``node`` cannot run (its innermost dead branch), or None when it can."""
        child = node
        for parent in reversed(self.index.ancestors(node)):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = _in(child, parent.body)
                known = self.test(parent)
                if known is not None and known.value != in_body:
                    return known.why
            child = parent
        return None

    def test(self, branch: ast.If | ast.IfExp) -> Known | None:
        """Return the value of ``branch``'s test, if the syntax alone decides it."""
        key = id(branch)
        if key not in self._tests:
            self._tests[key] = self._evaluate(branch.test, branch)
        return self._tests[key]

    def _evaluate(self, test: ast.expr, at: ast.AST) -> Known | None:
        if isinstance(test, ast.Constant):
            text = repr(test.value)
            return Known(bool(test.value), f"its test `{text}` is always {_truth(bool(test.value))}")
        if dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            return Known(False, "`TYPE_CHECKING` is False when the code runs")
        if isinstance(test, ast.Name):
            found = self._reaching_literal(test.id, at)
            if found is None:
                return None
            value, line = found
            return Known(bool(value), f"`{test.id}` is always {value!r} here (line {line})")
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._evaluate(test.operand, at)
            return Known(not inner.value, inner.why) if inner is not None else None
        if isinstance(test, ast.BoolOp):
            parts = [self._evaluate(value, at) for value in test.values]
            decider = isinstance(test.op, ast.Or)  # `or` is decided by a true part, `and` by a false one
            for part in parts:
                if part is not None and part.value == decider:
                    return Known(decider, part.why)
            if all(part is not None for part in parts):
                return Known(not decider, "; ".join(p.why for p in parts if p is not None))
        return None

    def value_of(self, name: str, at: ast.AST) -> ast.expr | None:
        """Return the expression local ``name`` holds at ``at``: its only reaching assignment's value, if plain.

        The same straight-line reasoning as for literals: any other binding
        on a path in between, a loop back edge, ``global``/``nonlocal``, or
        an assignment that is not ``name = <expr>`` gives None.
        """
        found = self._reaching(name, at)
        return found[0] if found is not None else None

    def _reaching_literal(self, name: str, at: ast.AST) -> tuple[object, int] | None:
        """Return the literal value and line of the only assignment of local ``name`` that reaches ``at``."""
        found = self._reaching(name, at)
        if found is None:
            return None
        value, line = found
        if isinstance(value, ast.Constant) and value.value is not Ellipsis:
            return value.value, line
        return None

    def _reaching(self, name: str, at: ast.AST) -> tuple[ast.expr, int] | None:
        """Return the value and line of the only plain assignment of local ``name`` that reaches ``at``."""
        index = self.index
        statement = at if isinstance(at, ast.stmt) else _statement_of(index, at)
        if statement is None or _binds(statement, name) and isinstance(at, ast.IfExp):
            return None
        function = function_of(index, statement)
        if not isinstance(function, FUNCTIONS) or name in self._shared(function):
            return None
        node: ast.AST = statement
        while node is not function:
            parent = index.parent(node)
            if parent is None:
                return None
            block = _block_of(parent, node)
            if block is not None:
                earlier = block[:next(i for i, s in enumerate(block) if s is node)]
                for previous in reversed(earlier):
                    if _binds(previous, name):
                        return _plain_assignment(previous, name)
            if _rebinds_before(parent, node, name):
                return None
            node = parent
        return None


def _truth(value: bool) -> str:
    return "true" if value else "false"


def _in(node: ast.AST, block: list[ast.stmt] | ast.expr) -> bool:
    if isinstance(block, list):
        return any(s is node for s in block)
    return block is node


def _statement_of(index: SyntaxIndex, node: ast.AST) -> ast.stmt | None:
    for ancestor in reversed(index.ancestors(node)):
        if isinstance(ancestor, ast.stmt):
            return ancestor
    return None


def _block_of(parent: ast.AST, node: ast.AST) -> list[ast.stmt] | None:
    """Return the statement list of ``parent`` that holds ``node``, if ``node`` is a statement there."""
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(s is node for s in block):
            return block if name not in ("handlers", "cases") else None
    return None


def _rebinds_before(parent: ast.AST, node: ast.AST, name: str) -> bool:
    """Tell whether the parts of ``parent`` that run before ``node`` (or again, through a loop) bind ``name``."""
    if isinstance(parent, _LOOPS):
        # The back edge: anything in the loop can run before the next pass reaches ``node``.
        return _binds(parent, name)
    if isinstance(parent, (ast.If, ast.While)):
        return _binds(parent.test, name)
    if isinstance(parent, (ast.With, ast.AsyncWith)):
        return any(_binds(item, name) for item in parent.items)
    if isinstance(parent, TRY):
        if _in(node, parent.body):
            return False
        # A handler, the else or the finally runs after any part of the body (and of the handlers).
        return any(_binds(s, name) for s in (*parent.body, *parent.handlers, *parent.orelse))
    if isinstance(parent, ast.ExceptHandler):
        return parent.name == name or (parent.type is not None and _binds(parent.type, name))
    if isinstance(parent, ast.Match):
        return _binds(parent.subject, name)
    if isinstance(parent, ast.match_case):
        return _binds(parent.pattern, name) or (parent.guard is not None and _binds(parent.guard, name))
    return not isinstance(parent, (*FUNCTIONS, ast.Module))  # anything else is unclear


def _binds(node: ast.AST, name: str) -> bool:
    """Tell whether running ``node`` may bind ``name`` in the current scope (nested scopes: only ``nonlocal``)."""
    for child in _walk_scope(node):
        if isinstance(child, ast.Name) and child.id == name and not isinstance(child.ctx, ast.Load):
            return True
        if isinstance(child, (*FUNCTIONS, ast.ClassDef)) and child.name == name:
            return True
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            for alias in child.names:
                if alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        if isinstance(child, ast.ExceptHandler) and child.name == name:
            return True
        if isinstance(child, (ast.MatchAs, ast.MatchStar)) and child.name == name:
            return True
        if isinstance(child, ast.MatchMapping) and child.rest == name:
            return True
        if isinstance(child, (ast.Global, ast.Nonlocal)) and name in child.names:
            return True
    return False


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """Yield ``node`` and what it holds, entering nested functions and classes only for ``nonlocal``/``global``."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, SCOPES):
            # Its decorators, defaults and annotations run here; its body only through nonlocal.
            if isinstance(current, ast.Lambda):
                stack.extend(current.args.defaults)
                stack.extend(d for d in current.args.kw_defaults if d is not None)
                continue
            stack.extend(current.decorator_list)
            if isinstance(current, FUNCTIONS):
                stack.extend(current.args.defaults)
                stack.extend(d for d in current.args.kw_defaults if d is not None)
            else:
                stack.extend(current.bases)
            stack.extend(n for n in ast.walk(current) if isinstance(n, (ast.Nonlocal, ast.Global)))
            continue
        stack.extend(ast.iter_child_nodes(current))


def _plain_assignment(statement: ast.stmt, name: str) -> tuple[ast.expr, int] | None:
    """Return ``(value, line)`` when ``statement`` is ``name = <expr>`` (chained targets of plain names too)."""
    if isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
        if not all(isinstance(t, ast.Name) for t in targets):
            return None
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets, value = [statement.target], statement.value
    else:
        return None
    if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
        return None
    return value, statement.lineno
