"""``insert``: add rendered code before or after each statement run matching an anchor."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, ClassVar, Mapping

import libcst as cst

from .base import ConfigError, Operation, Render, count, expect_count, parse_pattern, take_code
from .pattern import Pattern, find_statements
from .scope import find_scope
from .snippets import UnboundMetavariable, instantiate
from .splice import BodyEdit, edit_bodies, leading_lines


@dataclasses.dataclass(frozen=True)
class Insert(Operation):
    """Insert ``code`` right ``before`` or ``after`` each match of the anchor pattern."""

    name: ClassVar[str] = "insert"
    anchor: Pattern | None = None
    position: str = "before"
    code: str = ""
    expect: int = 1

    keys: ClassVar[frozenset[str]] = frozenset({"before", "after", "template", "code", "expect"})

    @classmethod
    def _convert(cls, config: Mapping[str, Any], render: Render) -> dict[str, Any]:
        given = [key for key in ("before", "after") if key in config]
        if len(given) != 1:
            raise ConfigError("before", "operation 'insert' needs exactly one of 'before' or 'after' (the anchor pattern)")
        position = given[0]
        return {
            "anchor": parse_pattern(position, render(position, str(config[position]))),
            "position": position,
            "code": take_code(config, render),
            "expect": count(config),
        }

    def describe(self) -> str:
        return f"the anchor '{self.anchor}'"

    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        assert self.anchor is not None
        matches = find_statements(self.anchor, find_scope(module, scope))
        expect_count(len(matches), self.expect, self.describe())
        edits: dict[int, list[BodyEdit]] = defaultdict(list)
        for found in matches:
            try:
                added = instantiate(self.code, found.bindings, module.default_newline)
            except UnboundMetavariable as error:
                raise ConfigError("code", f"the code uses ${error.args[0]}, which the anchor does not capture") from None
            body = found.block.body  # type: ignore[attr-defined]
            if self.position == "after":
                edits[id(found.block)].append(BodyEdit(found.end, found.end, tuple(added)))
                continue
            # Blank lines that separated the anchor from the code above now
            # separate the inserted code; the anchor keeps its own comments.
            anchor = body[found.start]
            lines = list(anchor.leading_lines)
            blank = 0
            while blank < len(lines) and lines[blank].comment is None:
                blank += 1
            if added:
                added[0] = added[0].with_changes(leading_lines=lines[:blank] + leading_lines(added[0]))
            kept = ([cst.EmptyLine(indent=False)] if blank else []) + lines[blank:]
            # The anchor as edited inside (a match nested in it), not as found.
            edits[id(found.block)].append(BodyEdit(found.start, found.start + 1, tuple(added), relined=tuple(kept)))
        return edit_bodies(module, edits)
