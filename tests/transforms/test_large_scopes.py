"""Searching a large scope costs time near-linear in its statements, with the answers a plain search gives.

A pattern that starts or ends with ``$...X`` can match a run that starts
anywhere and ends anywhere after: the plain search tried every end from
every start, cubic in the statements of a block (a module scope of a few
thousand statements never finished). ``find_statements`` now skips every
end before the least one at which each of the pattern's own statements
could have matched, and every start after the last place they can.
"""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patcher.transforms import pattern as engine
from patcher.transforms.pattern import Pattern, find_statements

from tests.fixtures_work import traced_lines


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
    work_small = traced_lines(lambda: find_statements(pattern, small))
    engine._FOUND.clear()
    work_large = traced_lines(lambda: find_statements(pattern, large))
    assert work_large <= 2.3 * work_small


# --- the closest code, when a pattern finds nothing -------------------------------------------

from patcher.transforms import closest  # noqa: E402
from patcher.transforms.closest import find_closest  # noqa: E402

CLOSEST_PATTERNS = [
    "$...A\ny = 3\n$...B",
    "$...A\nprint(y)\nreturn y",
    "$...\ndel z",
    "$...A\nx = 1\nprint($V)",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=12), st.sampled_from(CLOSEST_PATTERNS))
def test_a_leading_run_gives_every_start_what_searching_from_it_gives(lines: list[str], text: str) -> None:
    body = list(cst.parse_module("".join(f"{line}\n" for line in lines)).body)
    patterns = Pattern.parse(text).statements
    table = closest._leading_table(patterns, body)
    assert table is not None
    assert table == [closest._leading(patterns, body, start, engine.EMPTY) for start in range(len(body))]


def test_a_run_used_again_later_is_searched_from_each_start() -> None:
    patterns = Pattern.parse("$...A\nx = 1\n$...A").statements
    assert closest._leading_table(patterns, list(cst.parse_module("x = 1\n").body)) is None


def test_doubling_a_scope_at_most_doubles_the_work_of_naming_the_closest_code(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pattern opening with a run finds nothing in a module of flags: every
    # start, every length, every differing statement named, before.
    pattern = Pattern.parse("$...BEFORE\nuse_v1 = False\nreturn use_v1")

    def work(statements: int) -> int:
        module = _module(statements)
        closest._difference.cache_clear()
        return traced_lines(lambda: find_closest(pattern, module, module))

    small, large = work(150), work(300)
    assert large <= 2.3 * small
    flags = _module(150)
    found = find_closest(pattern, flags, flags)
    assert found is not None
    assert (found.first_line, found.statement, found.pattern, found.code) == (1, 2, "use_v1 = False", "use_v1 = True")
    monkeypatch.setattr(closest, "_leading_table", lambda patterns, body: None)  # each start searched, as before
    assert find_closest(pattern, flags, flags) == found


def test_a_huge_statement_is_compared_in_time_near_linear_in_its_size() -> None:
    # A class of hundreds of methods as the statement the pattern parts from:
    # comparing it costs time in proportion to its size.
    def work(methods: int) -> int:
        body = "".join(f"    def m{n}(self, x):\n        return x * {n}\n" for n in range(methods))
        module = cst.parse_module("import os\nclass Big:\n" + body)
        pattern = Pattern.parse("import os\nclass Small:\n    pass")
        closest._difference.cache_clear()
        return traced_lines(lambda: find_closest(pattern, module, module))

    assert work(600) <= 2.3 * work(300)


def test_the_lines_of_every_node_are_the_position_providers() -> None:
    # The closest code's line range comes from a line counter that replaces
    # libcst's PositionProvider (six times slower on a large file): the same
    # first and last line for every node, CRLF, comments and blocks included.
    from libcst.metadata import MetadataWrapper, PositionProvider

    from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

    vendor = (VENDOR_TREE / SHIPPED).read_text(encoding="utf-8")
    odd = "x = (1,\r\n     2)  # c\r\n\r\nclass A:\r\n    '''doc\r\n    '''\r\n    def f(self): return 1\r\n    # end\r\n"
    for text in (vendor, odd, vendor.replace("\n", "\r\n") + "\ny = 1"):
        module = cst.parse_module(text)
        theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        ours = closest._positions(module)
        assert {node: (place.start.line, place.end.line) for node, place in theirs.items()} == ours
