"""A pattern of several statements matches a run of them in one block; `$...X` among them takes a run of its own.

A `$...X` among a pattern's statements takes any run of the block's
statements, at the start, in the middle or at the end, the shortest that
lets the rest match; alone it takes one statement at a time. Runs found in
one block never overlap.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.transforms.pattern import Pattern, find_statements
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import FORWARD_DECODE, V2_DECODE, code_of


def _body(module: cst.Module, name: str) -> cst.IndentedBlock:
    """The block of the top-level function NAME (statement runs are found per block)."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            assert isinstance(statement.body, cst.IndentedBlock)
            return statement.body
    raise AssertionError(f"no function {name}")


def test_sequence_metavariable_takes_any_run_of_statements() -> None:
    module = cst.parse_module("if x:\n    a = 1\n    # note\n    b = 2\n    call(a, b)\nelse:\n    pass\n")
    found = find_statements(Pattern.parse("if x:\n    $...BODY\n    call($...)\nelse:\n    pass\n"), module)
    assert len(found) == 1
    assert code_of(module, found[0].bindings["BODY"]) == "a = 1\n# note\nb = 2\n"


def test_a_sequence_in_the_middle_of_a_statement_pattern_takes_the_statements_between() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    found = find_statements(Pattern.parse("use_v1 = $COND\n$...BRANCHES\nreturn output"), module)
    assert len(found) == 1
    (run,) = found
    assert run.block is _body(module, "forward_decode")
    assert (run.start, run.end) == (3, 7)
    assert code_of(module, run.bindings["COND"]) == "max_seq_len <= 8192"
    between = run.bindings["BRANCHES"]
    assert isinstance(between, tuple) and [type(s) for s in between] == [cst.If, cst.SimpleStatementLine]
    assert code_of(module, between).strip().endswith("torch.cuda.synchronize()")


def test_a_sequence_after_two_fixed_statements() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    (run,) = find_statements(Pattern.parse("output = torch.empty_like($Q)\nuse_v1 = $COND\n$...REST"), module)
    assert (run.start, run.end) == (2, 4) and run.bindings["REST"] == ()
    assert code_of(module, run.bindings["Q"]) == "query"


def test_a_statement_between_two_sequences_is_found_with_the_shortest_runs() -> None:
    # "use_v1 = ... anywhere in a block": the trailing `$...` takes nothing,
    # even where the block is that one statement.
    module = cst.parse_module("def f(n):\n    use_v1 = n <= 8192\n    return use_v1\n\ndef g(n):\n    use_v1 = n <= 4096\n")
    found = find_statements(Pattern.parse("$...BEFORE\nuse_v1 = $LIMIT\n$...AFTER"), module)
    assert [(run.block, run.start, run.end) for run in found] == [
        (_body(module, "f"), 0, 1), (_body(module, "g"), 0, 1)]
    assert all(run.bindings["BEFORE"] == () == run.bindings["AFTER"] for run in found)


def test_a_sequence_in_the_middle_may_take_no_statement() -> None:
    module = cst.parse_module("def f(x):\n    y = g(x)\n    return y\n")
    (run,) = find_statements(Pattern.parse("y = g(x)\n$...BETWEEN\nreturn y"), module)
    assert (run.start, run.end) == (0, 2) and run.bindings["BETWEEN"] == ()


def test_a_leading_sequence_starts_at_the_top_of_the_block_even_at_a_compound_statement() -> None:
    # The run begins at the block's first statement, an `if`, though the
    # pattern's first fixed statement is a plain line further down.
    source = "def f(x):\n    if x is None:\n        x = 0\n    y = x + 1\n    return y\n"
    module = cst.parse_module(source)
    (run,) = find_statements(Pattern.parse("$...SETUP\nreturn y"), module)
    assert (run.start, run.end) == (0, 3)
    assert code_of(module, run.bindings["SETUP"]) == "if x is None:\n    x = 0\ny = x + 1\n"


def test_a_trailing_sequence_may_take_nothing_at_the_end_of_a_block() -> None:
    module = cst.parse_module("def f(query):\n    output = torch.empty_like(query)\n")
    (run,) = find_statements(Pattern.parse("output = torch.empty_like(query)\n$...REST"), module)
    assert (run.start, run.end) == (0, 1) and run.bindings["REST"] == ()


def test_a_statement_metavariable_after_a_sequence_takes_the_last_statement_of_the_block() -> None:
    module = cst.parse_module("def f(query):\n    output = torch.empty_like(query)\n    log(output)\n"
                              "    return output\n")
    (run,) = find_statements(Pattern.parse("output = torch.empty_like(query)\n$...MIDDLE\n$LAST"), module)
    assert (run.start, run.end) == (0, 2) and code_of(module, run.bindings["LAST"]) == "log(output)\n"
    (run,) = find_statements(Pattern.parse("log(output)\n$...MIDDLE\n$LAST"), module)
    assert (run.start, run.end) == (1, 3) and code_of(module, run.bindings["LAST"]) == "return output\n"


def test_a_pattern_whose_sequence_cannot_be_completed_finds_nothing() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    assert find_statements(Pattern.parse("use_v1 = $COND\n$...BRANCHES\nreturn query"), module) == []
    assert find_statements(Pattern.parse("use_v2 = $COND\n$...BRANCHES\nreturn output"), module) == []


def test_a_sequence_among_the_small_statements_of_one_line() -> None:
    module = cst.parse_module("out = f(x)\ntorch.cuda.synchronize()\nlog(out); torch.cuda.synchronize()\n")
    found = find_statements(Pattern.parse("$...BEFORE; torch.cuda.synchronize()"), module)
    assert [(run.start, run.end) for run in found] == [(1, 2), (2, 3)]
    assert found[0].bindings["BEFORE"] == ()
    assert code_of(module, found[1].bindings["BEFORE"]) == "log(out); "


def test_an_unpacking_assignment_before_the_match_is_passed_over() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    (run,) = find_statements(Pattern.parse("output = torch.empty_like($Q)"), module)
    assert (run.start, run.end) == (2, 3)
    assert not find_statements(Pattern.parse("key_cache = value_cache"), module)


def _runs(pattern: str, code: str) -> list[tuple[int, int, dict[str, int]]]:
    """Return each run PATTERN finds in forward_decode of CODE: its start, end, and how many statements each `$...X` took."""
    module = cst.parse_module(code)
    scope = find_scope(module, "forward_decode")
    return [(found.start, found.end,
             {name: len(value) for name, value in found.bindings.items() if isinstance(value, tuple)})
            for found in find_statements(Pattern.parse(pattern), scope)]


@pytest.mark.parametrize("pattern", ["$...BODY", "$...", "$...HEAD\n$...TAIL"])
def test_a_pattern_of_sequence_metavariables_alone_takes_one_statement_at_a_time(pattern: str) -> None:
    runs = _runs(pattern, V2_DECODE)
    assert [(start, end) for start, end, _ in runs] == [(0, 1), (1, 2), (2, 3)]
    for _, _, bound in runs:
        # The shortest run that is not empty; with two, the first stays empty.
        assert sum(bound.values()) == (1 if bound else 0)
        assert bound.get("BODY", 1) == 1 and bound.get("HEAD", 0) == 0


def test_a_trailing_sequence_metavariable_after_the_first_statement_stays_empty() -> None:
    runs = _runs("output = $INIT\n$...REST", V2_DECODE)
    assert runs == [(0, 1, {"REST": 0})]


# Statement matches never overlap: three `x += 1` lines hold one run of two.
def test_statement_runs_do_not_overlap() -> None:
    pattern = Pattern.parse("x += 1\nx += 1")
    three = cst.parse_module("x += 1\nx += 1\nx += 1\n")
    assert [(m.start, m.end) for m in find_statements(pattern, three)] == [(0, 2)]
    four = cst.parse_module("x += 1\nx += 1\nx += 1\nx += 1\n")
    assert [(m.start, m.end) for m in find_statements(pattern, four)] == [(0, 2), (2, 4)]
