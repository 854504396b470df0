"""The statement search's memo of earlier answers never answers for another pattern or scope.

``find_statements`` remembers its answers per (pattern, scope); a build asks
about more pairs than it keeps, and patterns rendered per patch come and go.
"""

from __future__ import annotations

import libcst as cst

from patcher.transforms import pattern as pattern_module
from patcher.transforms.pattern import Pattern, find_statements

from tests.transforms.conftest import FORWARD_DECODE


def test_the_search_stays_right_past_its_memo_of_earlier_answers() -> None:
    # A long build asks about far more (pattern, scope) pairs than the memo keeps.
    kept = pattern_module._FOUND_KEPT
    modules = [cst.parse_module(f"x = {n}\ny = {n}\n") for n in range(kept + 20)]
    patterns = [Pattern.parse(f"y = {n}") for n in range(kept + 20)]
    for n, module in enumerate(modules):
        assert [(m.start, m.end) for m in find_statements(patterns[n], module)] == [(1, 2)]
        assert find_statements(patterns[n - 1], module) == []
        assert len(pattern_module._FOUND) <= kept
    # Asked again, the earliest answers (long evicted) and the latest agree with a fresh search.
    for n in (0, 1, kept + 19):
        assert [(m.start, m.end) for m in find_statements(patterns[n], modules[n])] == [(1, 2)]
        assert find_statements(patterns[n], modules[n - 1]) == []


def test_the_same_scope_asked_about_two_patterns_gets_two_answers() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    one, other = Pattern.parse("torch.cuda.synchronize()"), Pattern.parse("return output")
    assert [(m.start, m.end) for m in find_statements(one, module)] == [(5, 6)]
    assert [(m.start, m.end) for m in find_statements(other, module)] == [(6, 7)]
    elsewhere = cst.parse_module("torch.cuda.synchronize()\n")
    assert [(m.start, m.end) for m in find_statements(one, elsewhere)] == [(0, 1)]
    assert [(m.start, m.end) for m in find_statements(one, module)] == [(5, 6)]


def test_a_pattern_built_after_another_was_dropped_is_not_answered_for_it() -> None:
    # Patterns rendered per patch come and go; a new one may reuse a dropped
    # one's memory, and must still get its own answer.
    for n in range(50):
        module = cst.parse_module(f"block_size = {n}\n")
        found = [(m.start, m.end) for m in find_statements(Pattern.parse(f"block_size = {n}"), module)]
        other = [(m.start, m.end) for m in find_statements(Pattern.parse(f"block_size = {n + 1}"), module)]
        assert (found, other) == ([(0, 1)], [])
