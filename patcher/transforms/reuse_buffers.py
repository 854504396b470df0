"""``reuse-buffers``: write temporaries into buffers allocated once instead of fresh tensors.

Each temporary ``T`` maps to a buffer, an allocation and two forms of the
computation: ``T = <compute>`` becomes ``<into>`` (the same computation with
an ``out=`` argument naming the buffer), every read of ``T`` reads the
buffer, ``T`` leaves every ``del``, and the buffers are allocated once right
after the ``after`` anchor. It applies to every assignment of ``T`` in the
scope, however many update blocks repeat it.

The rewrite is only sound if the buffer cannot be seen under another name
once the next update overwrites it, so a temporary that escapes (is bound
to another name, returned, or put into a container) stops the step.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping

import libcst as cst

from .base import ConfigError, Operation, Render, StepFailed, count, expect_count, parse_pattern, require
from ..syntax import ancestor_ids
from .pattern import Pattern, find_statements, match, parse_snippet
from .scope import find_scope
from .snippets import instantiate
from .splice import BodyEdit, edit_bodies, replace_nodes


@dataclasses.dataclass(frozen=True)
class Buffer:
    """How one temporary is replaced by a preallocated buffer."""

    temporary: str
    buffer: str
    allocate: str  # expression allocating the buffer, e.g. torch.empty_like(m)
    compute: cst.BaseExpression  # pattern of the value the temporary is assigned
    into: str  # code computing the same into the buffer; $OUT names the buffer


@dataclasses.dataclass(frozen=True)
class ReuseBuffers(Operation):
    """Replace temporaries by buffers allocated once, in every update in the scope."""

    name: ClassVar[str] = "reuse-buffers"
    keys: ClassVar[frozenset[str]] = frozenset({"after", "buffers", "expect", "comment"})
    anchor: Pattern | None = None
    buffers: tuple[Buffer, ...] = ()
    expect: int = 1
    comment: str = ""  # said above the allocations, one '#' line per line

    @classmethod
    def _convert(cls, config: Mapping[str, Any], render: Render) -> dict[str, Any]:
        table = require(config, "buffers", cls.name)
        if not isinstance(table, Mapping) or not table:
            raise ConfigError("buffers", "'buffers' must map each temporary to its buffer")
        buffers = []
        for temporary, spec in table.items():
            key = f"buffers.{temporary}"
            if not isinstance(spec, Mapping):
                raise ConfigError(key, f"'{key}' must be a table")
            unknown = set(spec) - {"buffer", "allocate", "compute", "into"}
            if unknown:
                raise ConfigError(key, f"unknown key '{sorted(unknown)[0]}' in '{key}' (known: allocate, buffer, compute, into)")
            fields = {k: render(f"{key}.{k}", str(require(spec, k, cls.name))) for k in ("buffer", "allocate", "compute", "into")}
            if not fields["buffer"].isidentifier():
                raise ConfigError(f"{key}.buffer", f"'{key}.buffer' must be a name, not {fields['buffer']!r}")
            compute = parse_pattern(f"{key}.compute", fields["compute"])
            for part in ("allocate", "into"):
                parse_pattern(f"{key}.{part}", fields[part]).expression
            buffers.append(Buffer(temporary, fields["buffer"], fields["allocate"], compute.expression, fields["into"]))
        return {
            "anchor": parse_pattern("after", render("after", str(require(config, "after", cls.name)))),
            "buffers": tuple(buffers),
            "expect": count(config),
            "comment": render("comment", str(config.get("comment", ""))),
        }

    def describe(self) -> str:
        return ", ".join(f"'{b.temporary} = ...'" for b in self.buffers)

    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        assert self.anchor is not None
        expect_count(len(find_statements(self.anchor, find_scope(module, scope))), 1, f"the anchor '{self.anchor}'")
        # One buffer at a time: a later temporary's computation may read an
        # earlier one (torch.maximum(m, m_blk)), which must be renamed first.
        for buffer in self.buffers:
            module = self._reuse(module, find_scope(module, scope), buffer)
        return self._allocate(module, find_scope(module, scope))

    def _reuse(self, module: cst.Module, scope: cst.CSTNode, buffer: Buffer) -> cst.Module:
        uses = _Uses(buffer.temporary, buffer.buffer, scope)
        scope.visit(uses)
        if uses.clash:
            raise StepFailed(f"the buffer name '{buffer.buffer}' is already used")
        if uses.other_stores:
            raise StepFailed(f"'{buffer.temporary}' is bound by {uses.other_stores[0]}, which the step cannot rewrite")
        if uses.escapes:
            raise StepFailed(f"'{buffer.temporary}' escapes through {uses.escapes[0]}; "
                             "reusing its buffer would change what that name sees")
        for line in uses.assignments:
            if match(buffer.compute, _value(line)) is None:
                raise StepFailed(f"'{buffer.temporary}' is assigned '{_show(_value(line))}', "
                                 f"not '{_show(buffer.compute)}'")
        expect_count(len(uses.assignments), self.expect, f"'{buffer.temporary} = {_show(buffer.compute)}'")
        target = cst.Name(buffer.buffer)
        replacements: dict[int, cst.CSTNode] = {}
        for read in uses.loads:
            replacements[id(read)] = target
        for line in uses.assignments:
            bindings = {**(match(buffer.compute, _value(line)) or {}), "OUT": target}
            statement = instantiate(buffer.into, bindings)[0]
            replacements[id(line)] = line.with_changes(body=statement.body)  # type: ignore[attr-defined]
        for line in uses.dels:
            replacements[id(line)] = _without(line, buffer.temporary)
        return replace_nodes(module, replacements, within=scope)

    def _allocate(self, module: cst.Module, scope: cst.CSTNode) -> cst.Module:
        found = find_statements(self.anchor, scope)[0]  # type: ignore[arg-type]
        lines = [f"# {line}".rstrip() for line in self.comment.splitlines()]
        code = "\n".join([*lines, *(f"{b.buffer} = {b.allocate}" for b in self.buffers)])
        allocations = tuple(parse_snippet(code).body)
        return edit_bodies(module, {id(found.block): [BodyEdit(found.end, found.end, allocations)]})


def _value(line: cst.SimpleStatementLine) -> cst.BaseExpression:
    statement = line.body[0]
    assert isinstance(statement, cst.Assign)
    return statement.value


def _show(node: cst.CSTNode) -> str:
    from .pattern import decode_metavariables

    return decode_metavariables(cst.Module([]).code_for_node(node)).strip()


def _without(line: cst.SimpleStatementLine, name: str) -> cst.CSTNode:
    """Drop ``name`` from a ``del`` line, and the line itself if nothing is left."""
    statement = line.body[0]
    assert isinstance(statement, cst.Del)
    target = statement.target
    if isinstance(target, (cst.Tuple, cst.List)):  # `del t, u` or `del [t, u]`
        names = list(target.elements)
    else:
        names = [cst.Element(target)]
    kept = [element for element in names if not (isinstance(element.value, cst.Name) and element.value.value == name)]
    if not kept:
        return cst.RemoveFromParent()  # type: ignore[return-value]
    if len(kept) == 1:
        new_target: cst.BaseDelTargetExpression = kept[0].value  # type: ignore[assignment]
    else:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_target = target.with_changes(elements=kept)  # (two names or more: a tuple or list)
    return line.with_changes(body=[statement.with_changes(target=new_target)])


# Other ways to bind a name: the step cannot rewrite them into out= calls.
_STORES: dict[type, str] = {
    cst.AugAssign: "an augmented assignment", cst.For: "a for loop", cst.AsName: "an 'as' clause",
    cst.CompFor: "a comprehension", cst.NamedExpr: "a walrus", cst.Param: "a parameter",
}
# Ways a value outlives the next write into its buffer under another name.
_ESCAPES: dict[type, str] = {
    cst.Assign: "an assignment", cst.AnnAssign: "an assignment", cst.Return: "a return",
    cst.Yield: "a yield", cst.Element: "a container", cst.DictElement: "a dict",
}


class _Uses(cst.CSTVisitor):
    """Sort every occurrence of a temporary's name by what the code does with it."""

    def __init__(self, name: str, buffer: str, scope: cst.CSTNode):
        super().__init__()
        self.name, self.buffer = name, buffer
        # Only the paths to the two names are entered: libcst rebuilds every
        # node a visitor enters, and a whole function is thousands of them.
        names = {name, buffer}
        self.path = ancestor_ids(scope, lambda node: isinstance(node, cst.Name) and node.value in names)
        self.stack: list[cst.CSTNode] = []
        self.assignments: list[cst.SimpleStatementLine] = []
        self.loads: list[cst.Name] = []
        self.dels: list[cst.SimpleStatementLine] = []
        self.other_stores: list[str] = []
        self.escapes: list[str] = []
        self.clash = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name):
            if node.value == self.buffer:
                self.clash = True
            if node.value == self.name:
                self._classify(node)
        self.stack.append(node)
        return id(node) in self.path

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _classify(self, node: cst.Name) -> None:
        parent = self.stack[-1]
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return
        if isinstance(parent, cst.AssignTarget):
            line, assign = self.stack[-3], self.stack[-2]
            if (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                    and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
                self.assignments.append(line)
            else:
                self.other_stores.append("a chained or multiple assignment")
            return
        in_del = isinstance(parent, cst.Del) or (
            isinstance(parent, cst.Element) and isinstance(self.stack[-3], cst.Del)
        )
        if in_del:
            line = next(n for n in reversed(self.stack) if isinstance(n, cst.SimpleStatementLine))
            if line not in self.dels:
                self.dels.append(line)
            return
        if isinstance(parent, tuple(_STORES)):
            self.other_stores.append(_STORES[type(parent)])
            return
        if isinstance(parent, tuple(_ESCAPES)):
            self.escapes.append(_ESCAPES[type(parent)])
            return
        self.loads.append(node)
