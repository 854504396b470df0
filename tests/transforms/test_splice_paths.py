"""Splicing rebuilds only the path to each edit; everything else stays the very same node."""

from __future__ import annotations

import textwrap

import libcst as cst

from patcher.syntax import ancestor_ids, may_hold_blocks
from patcher.transforms.pattern import Pattern, find_statements
from patcher.transforms.splice import BodyEdit, edit_bodies, replace_nodes


SOURCE = textwrap.dedent(
    """\
    import torch

    def untouched(x):
        return [y * 2 for y in x]

    class Box:
        def grow(self, n):
            for i in range(n):
                self.size += i  # keep me
            return self.size
    """
)


def test_ancestor_ids_are_the_path_to_the_target() -> None:
    module = cst.parse_module(SOURCE)
    box = module.body[2]
    assert isinstance(box, cst.ClassDef)
    grow = box.body.body[0]
    path = ancestor_ids(module, lambda node: node is grow, enter=may_hold_blocks)
    assert path == {id(module), id(box), id(box.body)}


def test_body_edit_keeps_untouched_statements_as_they_were() -> None:
    module = cst.parse_module(SOURCE)
    found = find_statements(Pattern.parse("for $I in range($N):\n    $...BODY"), module)[0]
    added = tuple(cst.parse_module("torch.cuda.synchronize()\n").body)
    result = edit_bodies(module, {id(found.block): [BodyEdit(found.end, found.end, added)]})
    assert "for i in range(n):\n            self.size += i  # keep me\n        torch.cuda.synchronize()\n" in result.code
    assert result.body[0] is module.body[0] and result.body[1] is module.body[1]
    assert result.code.replace("        torch.cuda.synchronize()\n", "", 1) == SOURCE


def test_node_replacement_reaches_into_expressions_only_on_the_path() -> None:
    module = cst.parse_module(SOURCE)
    untouched = module.body[1]
    assert isinstance(untouched, cst.FunctionDef)
    comprehension = untouched.body.body[0].body[0].value  # type: ignore[attr-defined]
    result = replace_nodes(module, {id(comprehension.elt.right): cst.Integer("3")})
    assert "return [y * 3 for y in x]" in result.code
    assert result.body[2] is module.body[2]
