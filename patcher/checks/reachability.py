"""Find the code that cannot run, so rules judge only code that can.

A branch is dead when its ``if`` (or ``x if t else y``) test has a value
known from the syntax alone:

- a literal (``if False:``, ``if 0:``, the ``else`` of ``if True:``);
- inside a function, a local whose only reaching assignment is a literal:
  ``use_v1 = True`` and then ``if use_v1:``, with no other binding of the
  name on any path in between;
- a module flag: a module-level name set once, at the module's top level,
  to a literal (``USE_TRITON = False``) and never rebound, read at module
  level after that line or in a function where the name is not local;
- ``not`` of such a test, and ``and`` / ``or`` of them where one side decides;
- ``TYPE_CHECKING`` (``typing``'s flag, False when the code runs).

The body of a ``while`` whose test is known false the same way never runs.

Beyond branches, a statement after a ``return``, ``raise``, ``break`` or
``continue`` of its block (or after an ``if`` whose every live branch ends
so) cannot run, and neither can the body of a function defined inside
another one that nothing there ever names.

For locals the reasoning is straight-line, read backwards from the test
through the enclosing blocks. Anything that might rebind the name in
between makes the test unknown, and the branch live: an assignment,
augmented assignment, walrus, ``del``, ``for`` target, ``with ... as``,
``except ... as``, an import, a ``def``/``class`` of that name, anywhere in
an earlier statement (inside its own ``if``/``for``/``try``... too); a
binding later in a loop that holds the test (the back edge);
``global``/``nonlocal`` of the name; an assignment that is not one plain
name set to one literal.

A module flag is trusted only when nothing in the module can change it:
any second binding of the name in the module's scope (assignment,
augmented assignment, walrus, ``del``, ``for`` target, import or
``import ... as``, ``def``/``class``, ``with``/``except ... as``), a
``global`` of it in any function, an attribute assignment or ``del`` of
that name on any object (``sys.modules[__name__].USE_TRITON = True``),
``setattr(..., "USE_TRITON", ...)`` or a subscript assignment with that key
(``globals()["USE_TRITON"] = ...``) make that flag untrusted; ``exec``,
``eval``, a star import, ``globals()`` or ``vars()`` used other than to read
one key, and ``setattr`` with a computed name on ``sys.modules``/``__name__``
make every flag of the module untrusted. Other modules can assign it too
(``paged_attn.USE_TRITON = True``): the runner looks for that in the other
shipped files and reads the module again with those names untrusted
(``untrusted``). Class bodies read their own namespace first: a flag read
there is trusted only when the class body does not bind the name.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Iterator, Mapping

from .syntax_index import FUNCTIONS, SCOPES, TRY, SyntaxIndex, dotted, function_of

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ENDS = {ast.Return: "return", ast.Raise: "raise", ast.Break: "break", ast.Continue: "continue"}
# What a module can do to rebind any of its names where the syntax does not say which.
_DYNAMIC = frozenset({"exec", "eval"})
_READ_ONLY = frozenset({"get", "keys", "items", "values", "copy", "__contains__", "__getitem__"})
_MODULE_OBJECT_WORDS = ("sys.modules", "__name__", "globals", "import_module", "__import__")


@dataclass(frozen=True)
class Known:
    """A test's value, and why it is known: ``"`use_v1` is always True here (line 191)"``."""

    value: bool
    why: str


@dataclass(frozen=True)
class Flag:
    """A module flag: a name set once, at the module's top level, to a literal, and never rebound."""

    name: str
    value: object
    line: int


class Reachability:
    """Answer "can this node run?" for one file, caching each test it evaluates.

    ``untrusted`` names module flags that something outside the file may
    assign (another shipped module's ``paged_attn.USE_TRITON = True``).
    """

    def __init__(self, index: SyntaxIndex, untrusted: frozenset[str] = frozenset()):
        self.index = index
        self.untrusted = untrusted
        self._tests: dict[int, Known | None] = {}
        self._declared: dict[int, frozenset[str]] = {}
        self._unnamed: dict[int, bool] = {}

    def _shared(self, function: ast.AST) -> frozenset[str]:
        """Return the names ``global``/``nonlocal`` anywhere in ``function`` (nested functions too)."""
        key = id(function)
        if key not in self._declared:
            self._declared[key] = frozenset(name for n in ast.walk(function)
                                            if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names)
        return self._declared[key]

    def dead(self, node: ast.AST) -> str | None:
        """Say why ``node`` cannot run (the innermost reason), or None when it can."""
        child = node
        for parent in reversed(self.index.ancestors(node)):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = _in(child, parent.body)
                known = self.test(parent)
                if known is not None and known.value != in_body:
                    return known.why
            if isinstance(parent, ast.While) and _in_list(child, parent.body):
                # A loop whose test is false on entry never runs its body (its else runs instead).
                known = self.test(parent)
                if known is not None and not known.value:
                    return known.why
            if isinstance(child, ast.stmt):
                block = _block_of(parent, child)
                if block is not None:
                    end = self._ended_before(block, child)
                    if end is not None:
                        return end
            if isinstance(parent, FUNCTIONS) and _in_list(child, parent.body) and self._never_named(parent):
                return f"`{parent.name}` is defined inside another function that never uses it"
            child = parent
        return None

    def _ended_before(self, block: list[ast.stmt], statement: ast.stmt) -> str | None:
        """Say which earlier statement of ``block`` always leaves it before ``statement``, if one does."""
        for earlier in block:
            if earlier is statement:
                return None
            end = self._ends(earlier)
            if end is not None:
                return f"it comes after the `{end[0]}` at line {end[1]}"
        return None

    def _ends(self, statement: ast.stmt) -> tuple[str, int] | None:
        """Return the keyword and line that always leave the block when ``statement`` runs, or None."""
        kind = _ENDS.get(type(statement))
        if kind is not None:
            return kind, statement.lineno
        if isinstance(statement, ast.If):
            known = self.test(statement)
            body = self._block_ends(statement.body)
            orelse = self._block_ends(statement.orelse)
            if known is not None:
                return body if known.value else orelse
            if body is not None and orelse is not None:
                return body
        return None

    def _block_ends(self, block: list[ast.stmt]) -> tuple[str, int] | None:
        for statement in block:
            end = self._ends(statement)
            if end is not None:
                return end
        return None

    def _never_named(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Tell whether ``function`` is defined inside another function that never names it (nor asks its locals).

        A decorator may register it anywhere, so a decorated one is not judged.
        """
        key = id(function)
        if key not in self._unnamed:
            outer = function_of(self.index, function)
            unnamed = isinstance(outer, (*FUNCTIONS, ast.Lambda)) and not function.decorator_list
            if unnamed:
                assert outer is not None
                for node in ast.walk(outer):
                    if isinstance(node, ast.Name) and node.id in (function.name, "locals", "vars", "eval", "exec"):
                        if isinstance(node.ctx, ast.Load) and not _inside(self.index, node, function):
                            unnamed = False
                            break
            self._unnamed[key] = unnamed
        return self._unnamed[key]

    def test(self, branch: ast.If | ast.IfExp | ast.While) -> Known | None:
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
                flag = self.module_flags.get(test.id)
                if flag is None or not self.reads_module(test.id, at, flag):
                    return None
                return Known(bool(flag.value), f"`{flag.name}` is always {flag.value!r} (a module flag set once, "
                                               f"at line {flag.line}, and never reassigned)")
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


    # -- module flags ------------------------------------------------------

    @functools.cached_property
    def module_flags(self) -> Mapping[str, Flag]:
        """Return the module's trusted flags by name: set once, at top level, to a literal, never rebound."""
        tree = self.index.tree
        candidates: dict[str, tuple[list[str], ast.Constant, int]] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
                names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
                value = statement.value
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                    and statement.value is not None:
                names, value = [statement.target.id], statement.value
            else:
                continue
            if not isinstance(value, ast.Constant) or value.value is Ellipsis:
                continue
            for name in names:
                candidates[name] = (names, value, statement.lineno)
        if not candidates:
            return {}
        untrusted = set(self.untrusted) | self._changed_in_place()
        if "*" in untrusted:
            return {}
        bindings = self._module_bindings(frozenset(candidates))
        flags: dict[str, Flag] = {}
        for name, (names, value, line) in candidates.items():
            if bindings.get(name) == names.count(name) == 1 and name not in untrusted:
                flags[name] = Flag(name, value.value, line)
        return flags

    def _module_bindings(self, names: frozenset[str]) -> dict[str, int]:
        """Count, for each of ``names``, the places the module's own scope binds it (blocks and comprehensions too)."""
        index = self.index
        found: list[tuple[str, ast.AST]] = []
        for target in index.of(ast.Name):
            if target.id in names and not isinstance(target.ctx, ast.Load):
                found.append((target.id, target))
        for kind in (*FUNCTIONS, ast.ClassDef, ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.MatchAs,
                     ast.MatchStar, ast.MatchMapping):
            for binder in index.of(kind):
                found.extend((bound, binder) for bound in _bound_names(binder) if bound in names)
        counts: dict[str, int] = {}
        for bound, where in found:
            if function_of(index, where) is None:  # the module's scope, not a function's or a class's
                counts[bound] = counts.get(bound, 0) + 1
        return counts

    def tested_flags(self) -> frozenset[str]:
        """Return the module flags some ``if`` or conditional expression of this file tests."""
        flags = self.module_flags
        if not flags:
            return frozenset()
        tests: list[ast.expr] = [node.test for node in self.index.of(ast.If)]
        tests += [node.test for node in self.index.of(ast.IfExp)]
        return frozenset(n.id for test in tests for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in flags)

    def _changed_in_place(self) -> set[str]:
        """Return the names something in this module may set without binding them ("*": any name)."""
        return names_set_by(self.index, here=True)

    def reads_module(self, name: str, at: ast.AST, flag: Flag) -> bool:
        """Tell whether ``name`` read at ``at`` is the module's global, the flag's value already set."""
        node: ast.AST = at
        in_function = False
        for scope in reversed(self.index.ancestors(at)):
            if isinstance(scope, _COMPREHENSIONS):
                if any(_binds(generator.target, name) for generator in scope.generators):
                    return False
            elif isinstance(scope, ast.Lambda):
                if name in _parameters(scope.args):
                    return False
                in_function = True
            elif isinstance(scope, FUNCTIONS):
                if node in scope.decorator_list or _in_defaults(node, scope.args):
                    node = scope
                    continue  # evaluated where the function is defined
                if name in _parameters(scope.args) or any(_binds(s, name) for s in scope.body):
                    return False  # a local (or nonlocal) of that function
                in_function = True
            elif isinstance(scope, ast.ClassDef):
                # A class body reads its own namespace first; its methods skip it.
                if not in_function and any(_binds(s, name) for s in scope.body):
                    return False
            node = scope
        return in_function or _first_line(at) > flag.line


def names_set_by(index: SyntaxIndex, *, here: bool) -> set[str]:
    """Return the names a module's code may set on a module without binding them ("*": any name).

    ``here``: on itself (``global``, ``globals()``, ``exec``, a star import
    count too); else on another module it holds (``paged_attn.USE_TRITON =
    True``, ``setattr(paged_attn, "USE_TRITON", True)``).
    """
    changed: set[str] = set()
    if here:
        declared: list[ast.Global | ast.Nonlocal] = [*index.of(ast.Global), *index.of(ast.Nonlocal)]
        changed.update(name for node in declared for name in node.names)
        if any(alias.name == "*" for node in index.of(ast.ImportFrom) for alias in node.names):
            changed.add("*")
    for attribute in index.of(ast.Attribute):
        if not isinstance(attribute.ctx, ast.Load):
            changed.add(attribute.attr)
        elif attribute.attr == "__dict__" and _names_a_module(attribute.value) and not _read_only(index, attribute):
            changed.add("*")
    for subscript in index.of(ast.Subscript):
        key = subscript.slice
        if not isinstance(subscript.ctx, ast.Load) and isinstance(key, ast.Constant) and isinstance(key.value, str):
            changed.add(key.value)
    for call in index.of(ast.Call):
        name = dotted(call.func)
        if here and name in _DYNAMIC:
            changed.add("*")
        elif name in ("globals", "vars") and not _read_only(index, call):
            if (here and not call.args) or (call.args and _names_a_module(call.args[0])):
                changed.add("*")
        elif name == "setattr" and len(call.args) >= 2:
            key = call.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                changed.add(key.value)
            elif _names_a_module(call.args[0]):
                changed.add("*")
    return changed


def _read_only(index: SyntaxIndex, namespace: ast.expr) -> bool:
    """Tell whether a namespace (``globals()``, ``vars(m)``, ``m.__dict__``) is only read: one key, or ``in``."""
    parent = index.parent(namespace)
    if isinstance(parent, ast.Subscript) and parent.value is namespace:
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute) and parent.value is namespace:
        return parent.attr in _READ_ONLY and isinstance(index.parent(parent), ast.Call)
    return isinstance(parent, ast.Compare) and any(c is namespace for c in parent.comparators)


def _bound_names(node: ast.AST) -> Iterator[str]:
    """Yield each name ``node`` itself binds in the scope it runs in."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield alias.asname or alias.name.split(".")[0]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


def _names_a_module(node: ast.expr) -> bool:
    """Tell whether an expression may be a module object: it goes through ``sys.modules``, ``__name__``, an import."""
    text = ast.unparse(node)
    return any(word in text for word in _MODULE_OBJECT_WORDS)


def _parameters(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
    return {a.arg for a in every}


def _in_defaults(node: ast.AST, args: ast.arguments) -> bool:
    return any(d is node for d in (*args.defaults, *args.kw_defaults) if d is not None) or any(
        a.annotation is node for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def _first_line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0)


def _inside(index: SyntaxIndex, node: ast.AST, scope: ast.AST) -> bool:
    return any(a is scope for a in index.ancestors(node))


def _in_list(node: ast.AST, block: list[ast.stmt]) -> bool:
    return any(s is node for s in block)


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
