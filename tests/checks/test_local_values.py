"""What a local holds where it is read (``Reachability.value_of``): the expression of its one reaching assignment, or None."""

from __future__ import annotations

import ast

from patcher.checks.base import PythonSource


def test_value_of_gives_the_expression_a_local_holds() -> None:
    code = ("def forward_decode(n):\n    limit = 32 * 1024\n    max_len = n\n    if n > limit:\n        run(limit)\n"
            "    limit: int\n    run(limit)\n")
    source = PythonSource("paged_attn.py", code.encode())
    first, second = source.index.calls("run")
    found = source.reachability.value_of("limit", first)
    assert isinstance(found, ast.BinOp) and source.code(found) == "32 * 1024"
    assert source.reachability.value_of("max_len", first) is not None
    assert source.reachability.value_of("limit", second) is None
    assert source.reachability.value_of("absent", first) is None


def test_value_of_is_none_for_a_name_bound_inside_another_assignment() -> None:
    code = "def forward_decode(n):\n    limit = (threshold := 32768)\n    run(threshold)\n"
    source = PythonSource("paged_attn.py", code.encode())
    (call,) = source.index.calls("run")
    assert source.reachability.value_of("threshold", call) is None
    assert source.code(source.reachability.value_of("limit", call)) == "threshold := 32768"
