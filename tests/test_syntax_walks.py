"""``syntax``: libcst trees walked through their fields, with one notion of "layout only".

A walk of the code (``code_only``) never meets whitespace, comments or
punctuation, so two spellings of the same code walk alike; a full walk
meets every child libcst itself lists. ``ancestor_ids`` finds every node
with a target below it, and ``may_hold_blocks`` says where an indented
block can sit.
"""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst
import pytest

from patcher.syntax import LAYOUT_FIELDS, ancestor_ids, child_nodes, field_names, is_layout_field, is_node, \
    may_hold_blocks
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE



def _libcst_parses(code: str) -> bool:
    try:
        cst.parse_module(code)
    except cst.CSTValidationError:
        return False
    return True


# Valid Python that libcst before 1.9 refuses ("Cannot have a trailing comma
# without **rest"): there the comma after **rest cannot be walked at all.
MAPPING_REST_COMMA = _libcst_parses("match x:\n    case {**rest,}:\n        pass\n")

# Every layout form in one module: a header comment, comment lines before
# statements and after decorators, parentheses, trailing commas, semicolons,
# keyword '=', slices with both colons, comments after block headers, and a footer.
LAYOUT_RICH = textwrap.dedent('''\
    # header comment

    import os, sys  # trailing comment
    from typing import (Any,
                        Callable,)


    @decorator  # after the decorator
    # between the decorator and the def
    def forward(self, query , key = None, *, scale: float = ( 1.0 ), ) -> Any :  # header comment
        # a comment line before the first statement
        out = ( query [ 1 : 2 : 3 ] ) ; out = call ( out , key = key , )
        if out is None :
            return ( out )
            # footer comment of the block
        if key :  out = key
        match out :
            case { "a" : 1 , ** rest REST_COMMA} :
                pass
        return out
    # footer comment
    ''').replace("REST_COMMA", ", " if MAPPING_REST_COMMA else "")

LAYOUT_TYPES = (cst.BaseParenthesizableWhitespace, cst.Comment, cst.EmptyLine, cst.TrailingWhitespace,
                cst.Newline, cst.Comma, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen, cst.Colon)


def nodes_of(root: cst.CSTNode, *, code_only: bool) -> list[cst.CSTNode]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(child_nodes(node, code_only=code_only))
    return found


def shape(node: cst.CSTNode) -> tuple[str, tuple[object, ...]]:
    """The node's type and its code children's shapes: what the code is, not how it is spelled."""
    return type(node).__name__, tuple(shape(child) for child in child_nodes(node, code_only=True))


def vendor_module() -> cst.Module:
    return cst.parse_module((VENDOR_TREE / SHIPPED).read_bytes())


def test_a_walk_of_the_code_meets_no_whitespace_comment_or_punctuation() -> None:
    module = cst.parse_module(LAYOUT_RICH)
    everything = nodes_of(module, code_only=False)
    assert {type(n) for n in everything if isinstance(n, LAYOUT_TYPES)} >= {
        cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.Comment, cst.EmptyLine, cst.TrailingWhitespace,
        cst.Newline, cst.Comma, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen, cst.Colon}
    assert [type(n).__name__ for n in nodes_of(module, code_only=True) if isinstance(n, LAYOUT_TYPES)] == []


@pytest.mark.parametrize("plain, spelled", [
    ("x = 1\n", "x = ( 1 )  # one\n"),
    ("x = 1\n", "x = 1 ;\n"),
    ("f(a, b)\n", "f( a ,\n  b , )\n"),
    ("def f(a, b=1):\n    return a\n", "def f( a , b = 1 , ) :  # f\n    # body\n    return ( a )\n    # end\n"),
    ("@d\ndef f():\n    pass\n", "# top\n\n@d  # deco\n# after\ndef f() :\n    pass\n# footer\n"),
    ("x[1:2:3]\n", "x [ 1 : 2 : 3 ]\n"),
    ("from m import a, b\n", "from m import (a ,\n    b ,)\n"),
    pytest.param("match x:\n    case {'a': 1, **rest}:\n        pass\n",
                 "match x:\n    case {'a': 1, **rest,}:\n        pass\n",
                 marks=pytest.mark.skipif(not MAPPING_REST_COMMA, reason="this libcst refuses {**rest,}")),
])
def test_two_spellings_of_the_same_code_walk_alike(plain: str, spelled: str) -> None:
    assert shape(cst.parse_module(plain)) == shape(cst.parse_module(spelled))


def test_a_full_walk_meets_every_child_libcst_lists_in_field_order() -> None:
    for node in nodes_of(vendor_module(), code_only=False):
        children = child_nodes(node)
        assert sorted(map(id, children)) == sorted(map(id, node.children)), type(node).__name__
        in_fields = []
        for field in dataclasses.fields(node):
            value = getattr(node, field.name)
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, cst.CSTNode):
                    in_fields.append(id(item))
        assert list(map(id, children)) == in_fields, type(node).__name__
        code = child_nodes(node, code_only=True)
        layout = [id(c) for c in children if id(c) not in set(map(id, code))]
        assert [id(c) for c in children if id(c) not in set(layout)] == list(map(id, code))


@pytest.mark.parametrize("node, code, every", [
    (cst.Module([]), ("body",),
     ("body", "header", "footer", "encoding", "default_indent", "default_newline", "has_trailing_newline")),
    (cst.IndentedBlock([]), ("body",), ("body", "header", "indent", "footer")),
    (cst.SimpleStatementLine([]), ("body",), ("body", "leading_lines", "trailing_whitespace")),
    (cst.Slice(lower=None, upper=None), ("lower", "upper", "step"),
     ("lower", "upper", "step", "first_colon", "second_colon")),
    (cst.Arg(cst.Name("a")), ("value", "keyword", "star"),
     ("value", "keyword", "equal", "comma", "star", "whitespace_after_star", "whitespace_after_arg")),
    (cst.EmptyLine(), ("comment",), ("indent", "whitespace", "comment", "newline")),
    (cst.TrailingWhitespace(), ("comment",), ("whitespace", "comment", "newline")),
    (cst.SimpleStatementSuite([]), ("body",), ("body", "leading_whitespace", "trailing_whitespace")),
    (cst.MatchMapping(), ("elements", "lbrace", "rbrace", "rest"),
     ("elements", "lbrace", "rbrace", "rest", "whitespace_before_rest", "trailing_comma", "lpar", "rpar")),
    (cst.Name("a"), ("value",), ("value", "lpar", "rpar")),
    (cst.Expr(cst.Name("a")), ("value",), ("value", "semicolon")),
])
def test_field_names_with_and_without_layout(node: cst.CSTNode, code: tuple[str, ...],
                                             every: tuple[str, ...]) -> None:
    # Asked in both orders, so neither answer is served from the other's cache.
    assert field_names(node, code_only=True) == code
    assert field_names(node) == every
    assert field_names(node, code_only=True) == code
    assert field_names(node, code_only=False) == every


def test_layout_fields_are_whitespace_comments_and_punctuation_only() -> None:
    for name in LAYOUT_FIELDS | {"whitespace_before", "whitespace_after_arg", "whitespace"}:
        assert is_layout_field(name), name
    for name in ("body", "value", "test", "orelse", "comment", "keyword", "star", "name", "args", "white"):
        assert not is_layout_field(name), name


def test_is_node_tells_nodes_from_other_values_every_time() -> None:
    values = [cst.Name("a"), cst.Comma(), cst.Module([]), "a", 1, None, [cst.Name("a")], cst.MaybeSentinel.DEFAULT]
    expected = [True, True, True, False, False, False, False, False]
    assert [is_node(v) for v in values] == expected
    assert [is_node(v) for v in values] == expected  # the second time from the per-type cache


def test_ancestor_ids_are_exactly_the_nodes_with_a_target_below_nested_targets_too() -> None:
    module = vendor_module()

    def is_call(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call)

    def below(node: cst.CSTNode, enter=None) -> bool:  # type: ignore[no-untyped-def]
        if enter is not None and not enter(node):
            return False
        return any(is_call(c) or below(c, enter) for c in child_nodes(node, code_only=True))

    everything = nodes_of(module, code_only=True)
    expected = {id(n) for n in everything if below(n)}
    found = ancestor_ids(module, is_call)
    assert found == expected
    # Calls inside calls: the outer call holds a target, so it is an ancestor too.
    assert any(is_call(n) and id(n) in found for n in everything)
    assert id(module) in found

    def outside_functions(node: cst.CSTNode) -> bool:
        return not isinstance(node, cst.FunctionDef)

    source = cst.parse_module("setup(f(x))\nclass A:\n    log = make(1)\n    def g(self):\n        return h(2)\n")
    narrowed = ancestor_ids(source, is_call, enter=outside_functions)
    reached, stack = [], [source]  # the nodes the search reaches: none below a def
    while stack:
        node = stack.pop()
        reached.append(node)
        stack.extend(child_nodes(node, code_only=True) if outside_functions(node) else ())
    kept = [n for n in reached if below(n, outside_functions)]
    assert narrowed == {id(n) for n in kept}
    assert sorted(type(n).__name__ for n in kept) == [
        "Arg", "Assign", "Call", "ClassDef", "Expr", "IndentedBlock", "Module", "SimpleStatementLine",
        "SimpleStatementLine"]
    # Entering the def too adds it, its block, its line and its return.
    assert len(ancestor_ids(source, is_call)) == len(narrowed) + 4


def test_ancestor_ids_never_search_the_layout() -> None:
    module = cst.parse_module(LAYOUT_RICH)
    assert ancestor_ids(module, lambda node: isinstance(node, (cst.Comment, cst.Comma, cst.EmptyLine))) == set()
    assert ancestor_ids(cst.parse_module("x = 1\n"), lambda node: False) == set()


def test_blocks_sit_only_under_nodes_that_may_hold_them() -> None:
    module = vendor_module()
    for node in nodes_of(module, code_only=False):
        if not may_hold_blocks(node):
            assert not any(isinstance(n, cst.IndentedBlock) for n in nodes_of(node, code_only=False))
    for kind in (cst.Module([]), cst.IndentedBlock([]), cst.If(cst.Name("a"), cst.IndentedBlock([])),
                 cst.FunctionDef(cst.Name("f"), cst.Parameters(), cst.IndentedBlock([])), cst.Else(cst.IndentedBlock([]))):
        assert may_hold_blocks(kind) and may_hold_blocks(kind), type(kind).__name__
    for kind in (cst.Name("a"), cst.Call(cst.Name("f")), cst.SimpleStatementLine([]), cst.SimpleStatementSuite([]),
                 cst.Pass(), cst.Return(), cst.SimpleWhitespace(" "), cst.ParenthesizedWhitespace(), cst.EmptyLine(),
                 cst.TrailingWhitespace()):
        assert not may_hold_blocks(kind) and not may_hold_blocks(kind), type(kind).__name__
