"""Searching a large scope costs time near-linear in its statements, with the answers a plain search gives.

A pattern that starts or ends with ``$...X`` can match a run that starts
anywhere and ends anywhere after: the plain search tried every end from
every start, cubic in the statements of a block (a module scope of a few
thousand statements never finished). ``find_statements`` now skips every
end before the least one at which each of the pattern's own statements
could have matched, and every start after the last place they can.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patcher.transforms import pattern as engine
from patcher.transforms.pattern import Pattern, find_statements


def _plain(pattern: Pattern, scope: cst.CSTNode) -> list[tuple[int, int, int]]:
    """The search as it was: every start, every end, shortest first (the reference)."""
    found = []
    first = pattern.statements[0]
    for number, block in enumerate(engine._blocks(scope)):
        body = list(block.body)  # type: ignore[attr-defined]
        start = 0
        while start < len(body):
            hit = engine._match_at(pattern.statements, body, start) if engine._may_start(first, body[start]) else None
            if hit is None:
                start += 1
                continue
            found.append((number, start, hit[0]))
            start = max(hit[0], start + 1)
    return found


def _found(pattern: Pattern, scope: cst.CSTNode) -> list[tuple[int, int, int]]:
    blocks = {id(block): number for number, block in enumerate(engine._blocks(scope))}
    return [(blocks[id(m.block)], m.start, m.end) for m in find_statements(pattern, scope)]


STATEMENTS = ["x = 1", "y = 2", "x = 1", "z = x", "print(x)", "return y", "del x"]
PATTERNS = [
    "$...A\ny = 2\n$...B",
    "$...A\nx = 1",
    "x = 1\n$...B\nz = x",
    "$...A\nprint($X)\n$...B\nreturn $Y",
    "$...\ndel x",
    "y = 2\n$S\n$...\nprint(x)",
    "$...A\nx = 1\n$...A",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(STATEMENTS), max_size=14), st.sampled_from(PATTERNS))
def test_a_pattern_with_runs_finds_what_the_plain_search_finds(lines: list[str], text: str) -> None:
    module = cst.parse_module("def f():\n" + "".join(f"    {line}\n" for line in lines or ["pass"]))
    pattern = Pattern.parse(text)
    assert _found(pattern, module) == _plain(pattern, module)


def _traced_lines(run: Callable[[], object]) -> int:
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    sys.settrace(lambda frame, event, arg: local)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


def _module(statements: int) -> cst.Module:
    """A module scope of STATEMENTS diagnostics flags, one of them twice near the end."""
    lines = [f"_DEBUG_{n} = int(os.environ.get('PAGED_ATTN_DEBUG_{n}', '0'))\n" for n in range(statements)]
    lines.insert(statements - 5, "use_v1 = True\n")
    return cst.parse_module("import os\n" + "".join(lines))


@pytest.mark.parametrize("text", ["$...BEFORE\nuse_v1 = True\n$...AFTER", "$...BEFORE\nuse_v1 = False"])
def test_doubling_a_scope_at_most_doubles_the_work_of_a_search_with_runs(text: str) -> None:
    # One match near the end, or none: the plain search tried every end from
    # every start (about n * n / 2 matches of the pattern here).
    pattern = Pattern.parse(text)
    tiny, small, large = _module(40), _module(300), _module(600)
    assert _found(pattern, tiny) == _plain(pattern, tiny) and len(_found(pattern, tiny)) == ("True" in text)
    engine._FOUND.clear()
    work_small = _traced_lines(lambda: find_statements(pattern, small))
    engine._FOUND.clear()
    work_large = _traced_lines(lambda: find_statements(pattern, large))
    assert work_large <= 2.3 * work_small
