"""Turn rendered template code into statements, filling in what a pattern captured."""

from __future__ import annotations

from typing import Any, Sequence

import libcst as cst

from .pattern import Bindings, layout_key, parse_snippet, sequence_metavariable, single_metavariable


class UnboundMetavariable(KeyError):
    """The template uses a metavariable its pattern did not capture."""


def instantiate(code: str, bindings: Bindings, newline: str = "\n") -> list[cst.BaseStatement]:
    """Parse ``code`` and replace each ``$X`` / ``$...X`` by what the match captured.

    ``newline`` is the line ending of the file the code goes into: a line
    break inside a token of the template (a triple-quoted string, a
    backslash continuation) takes it, as the file's own lines do.
    """
    module = parse_snippet(code)
    filled = module.visit(_Filler(bindings, newline))
    assert isinstance(filled, cst.Module)
    return list(filled.body)


class _Filler(cst.CSTTransformer):
    def __init__(self, bindings: Bindings, newline: str = "\n"):
        super().__init__()
        self.bindings = bindings
        self.newline = newline

    def _lookup(self, name: str) -> object:
        if name not in self.bindings:
            raise UnboundMetavariable(name)
        return self.bindings[name]

    def on_leave(  # type: ignore[override]  # returns nodes of other types by design
        self, original: cst.CSTNode, updated: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        if type(updated) is cst.EmptyLine and updated.comment is None and updated.indent:
            # A blank line between the template's top-level statements parses as
            # "indented" (the module's indentation is empty); placed in a block it
            # would be written with the block's indentation: trailing whitespace.
            return updated.with_changes(indent=False)
        if self.newline != "\n" and type(updated) in _RAW_TEXT and "\n" in updated.value:  # type: ignore[attr-defined]
            # Only the template's own nodes pass here: what a capture brings back is not visited.
            return updated.with_changes(value=updated.value.replace("\n", self.newline))  # type: ignore[attr-defined]
        if isinstance(updated, cst.Name):
            name = single_metavariable(updated)
            if name is not None:
                value = self._lookup(name)
                # A statement-valued capture is spliced at the body level below.
                if isinstance(value, cst.BaseExpression):
                    return value
        if isinstance(updated, (cst.IndentedBlock, cst.Module)):
            return updated.with_changes(body=self._splice(updated.body))
        if isinstance(updated, cst.Call):
            changes: dict[str, object] = {"args": _fix_commas(self._splice(updated.args))}
            name = sequence_metavariable(updated.args[0]) if len(updated.args) == 1 else None
            if name and layout_key(name) in self.bindings:
                changes["whitespace_before_args"] = self.bindings[layout_key(name)]
            return updated.with_changes(**changes)
        if isinstance(updated, (cst.List, cst.Tuple, cst.Set)):
            return updated.with_changes(elements=_fix_commas(self._splice(updated.elements)))
        return updated

    def _splice(self, items: Sequence[cst.CSTNode]) -> list[Any]:
        out: list[cst.CSTNode] = []
        for item in items:
            name = sequence_metavariable(item)
            if name is None and isinstance(item, cst.BaseStatement):
                name = single_metavariable(item)
            if name is None:
                out.append(item)
                continue
            value = self._lookup(name)
            out.extend(value if isinstance(value, tuple) else (value,))
        return out


# Nodes whose text may hold a line break of its own (Newline nodes take the file's line ending by themselves).
_RAW_TEXT = (cst.SimpleString, cst.FormattedStringText, cst.SimpleWhitespace)


def _fix_commas(items: list[Any]) -> list[Any]:
    # Captured arguments keep their own commas; make sure all but the last
    # have one and the last keeps whatever the template gave it.
    fixed = []
    for index, item in enumerate(items):
        last = index == len(items) - 1
        if not last and isinstance(getattr(item, "comma", None), cst.MaybeSentinel):
            item = item.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fixed.append(item)
    return fixed
