"""``replace``: swap each run of statements matching a pattern for rendered code."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, ClassVar, Iterator, Mapping

import libcst as cst

from ..syntax import child_nodes, may_hold_blocks
from .base import ConfigError, Operation, Render, StepFailed, count, expect_count, parse_pattern, require, take_code
from .pattern import Pattern, StatementMatch, find_statements
from .scope import find_scope
from .snippets import UnboundMetavariable, instantiate
from .splice import BodyEdit, edit_bodies, move_comments


@dataclasses.dataclass(frozen=True)
class Replace(Operation):
    """Replace every match of ``pattern`` by ``code``; metavariables carry over."""

    name: ClassVar[str] = "replace"
    pattern: Pattern | None = None
    code: str = ""
    expect: int = 1

    keys: ClassVar[frozenset[str]] = frozenset({"pattern", "template", "code", "expect"})

    @classmethod
    def _convert(cls, config: Mapping[str, Any], render: Render) -> dict[str, Any]:
        pattern = str(require(config, "pattern", cls.name))
        return {
            "pattern": parse_pattern("pattern", render("pattern", pattern)),
            "code": take_code(config, render),
            "expect": count(config),
        }

    def describe(self) -> str:
        return f"'{self.pattern}'"

    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        assert self.pattern is not None
        matches = find_statements(self.pattern, find_scope(module, scope))
        expect_count(len(matches), self.expect, self.describe())
        _refuse_nested(matches, self.describe())
        edits: dict[int, list[BodyEdit]] = defaultdict(list)
        for found in matches:
            removed = list(found.block.body[found.start : found.end])  # type: ignore[attr-defined]
            try:
                added = instantiate(self.code, found.bindings, module.default_newline)
            except UnboundMetavariable as error:
                raise ConfigError("code", f"the code uses ${error.args[0]}, which the pattern does not capture") from None
            edits[id(found.block)].append(
                BodyEdit(found.start, found.end, move_comments(removed, added))
            )
        return edit_bodies(module, edits)



def _refuse_nested(matches: list[StatementMatch], what: str) -> None:
    """Fail when a match lies inside the code another match replaces.

    The outer replacement is built from the code as found, so the inner
    one would be dropped without a word while the count said both applied.
    """
    if len(matches) < 2:
        return
    replaced: set[int] = set()
    for found in matches:
        for statement in found.block.body[found.start : found.end]:  # type: ignore[attr-defined]
            replaced.update(_blocks_inside(statement))
    if any(id(found.block) in replaced for found in matches):
        raise StepFailed(f"{what} matches inside the code of another of its matches; "
                         "one replace cannot rewrite both (narrow the pattern, or its scope)")


def _blocks_inside(node: cst.CSTNode) -> Iterator[int]:
    for child in child_nodes(node, code_only=True):
        if type(child) is cst.IndentedBlock:
            yield id(child)
        if may_hold_blocks(child):
            yield from _blocks_inside(child)
