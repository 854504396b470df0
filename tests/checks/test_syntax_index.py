"""The syntax index every rule shares: each node by type in source order, its parent and ancestors, the calls of a name."""

from __future__ import annotations

import ast

from patcher.checks.base import PythonSource
from patcher.checks.syntax_index import called_name, contains, function_of

NESTED = """\
class PagedAttention:
    @staticmethod
    def forward_decode(q):
        out = [lambda: ops.paged_attention_v1(q)]
        ops.paged_attention_v1(q)
        return ops.paged_attention_v2(q, f(g(q)))
"""


def test_the_index_knows_every_node_its_parent_and_where_each_call_sits() -> None:
    source = PythonSource("qwen3_6_scripts/paged_attn.py", NESTED.encode())
    index = source.index
    assert index.tree is source.tree
    (cls,) = index.of(ast.ClassDef)
    (function,) = index.of(ast.FunctionDef)
    (lam,) = index.of(ast.Lambda)
    assert [c.lineno for c in index.of(ast.Call)] == [4, 5, 6, 6, 6]  # source order
    assert [called_name(c) for c in index.of(ast.Call)] == [
        "paged_attention_v1", "paged_attention_v1", "paged_attention_v2", "f", "g"]
    assert index.of(ast.While) == []
    assert index.parent(source.tree) is None and index.parent(cls) is source.tree
    assert index.parent(function) is cls
    inner, outer = index.calls("paged_attention_v1")
    assert index.ancestors(outer)[:3] == (source.tree, cls, function)
    assert isinstance(index.ancestors(outer)[-1], ast.Expr)
    assert index.calls("paged_attention_v1", inside=lam) == [inner]
    assert index.calls("paged_attention_v1", inside=function) == [inner, outer]
    assert index.calls("paged_attention_v3") == []
    assert function_of(index, inner) is lam and function_of(index, outer) is function
    assert function_of(index, cls) is None
    assert contains(index.ancestors(outer), function) and not contains(index.ancestors(outer), lam)
    assert not contains((ast.parse("x"),), source.tree)  # equal-looking is not the same place
