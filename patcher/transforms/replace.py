"""``replace``: swap each run of statements matching a pattern for rendered code."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, ClassVar, Mapping

import libcst as cst

from .base import ConfigError, Operation, Render, count, expect_count, parse_pattern, require, take_code
from .pattern import Pattern, find_statements
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
        edits: dict[int, list[BodyEdit]] = defaultdict(list)
        for found in matches:
            removed = list(found.block.body[found.start : found.end])  # type: ignore[attr-defined]
            try:
                added = instantiate(self.code, found.bindings)
            except UnboundMetavariable as error:
                raise ConfigError("code", f"the code uses ${error.args[0]}, which the pattern does not capture") from None
            edits[id(found.block)].append(
                BodyEdit(found.start, found.end, move_comments(removed, added))
            )
        return edit_bodies(module, edits)

