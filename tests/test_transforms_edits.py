"""Edits the pipeline makes that no other test pinned: several edits in one block, emptied blocks, spliced arguments, messages."""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.pattern import Pattern, find_statements


def test_edits_that_grow_one_block_land_where_each_match_was(run_steps) -> None:  # type: ignore[no-untyped-def]
    # Applied from the last to the first, so an earlier edit's new lines do not move a later one.
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "x += 1"
        code = "x += 1\\nlog(x)"
        expect = 2
    '''
    source = "def f(x):\n    x += 1\n    y = 2\n    x += 1\n    return x\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "def f(x):\n    x += 1\n    log(x)\n    y = 2\n    x += 1\n    log(x)\n    return x\n"


def test_a_block_left_empty_gets_pass(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "warn_once()"
        code = ""
    '''
    source = "def f():\n    # the vendor's reminder\n    warn_once()\n\n\ndef g():\n    return 1\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    # The block's only statement goes; its comment stays above the pass (see test_transforms_comments.py).
    assert patched.startswith("def f():\n    # the vendor's reminder\n    pass\n\n\ndef g():")
    assert "def g():\n    return 1\n" in patched


def test_spliced_arguments_are_separated_as_written(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "y = g($...ARGS)"
        code = "y = h($...ARGS, extra)"
    '''
    patched, outcome = run_steps(steps, "y = g(a, b)\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "y = h(a, b, extra)\n"


@pytest.mark.parametrize(("expect", "source", "message"), [
    ("expect = 2", "x += 1\n", "expected 'x += 1' 2 times, found it 1 time"),
    ("expect = 3", "x += 1\nx += 1\n", "expected 'x += 1' 3 times, found it 2 times"),
    ("", "y = 0\n", "expected 'x += 1' once, found it 0 times"),
])
def test_a_count_mismatch_says_both_counts(run_steps, expect: str, source: str, message: str) -> None:  # type: ignore[no-untyped-def]
    steps = f'''
        [[steps]]
        op = "replace"
        pattern = "x += 1"
        code = "x += 2"
        {expect}
    '''
    patched, outcome = run_steps(steps, source)
    assert outcome.status is Status.FAILED and message in outcome.detail
    assert patched == source


def test_a_missing_nested_scope_names_where_it_looked(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "x += 1"
        code = "x += 2"
    '''
    source = "class PagedAttention:\n    def forward_decode(self):\n        x += 1\n"
    _, outcome = run_steps(steps, source, scope="PagedAttention.forward_prefix")
    assert outcome.status is Status.FAILED
    assert "no class or function 'forward_prefix' in PagedAttention" in outcome.detail
    _, outcome = run_steps(steps, source, scope="Missing.forward_prefix")
    assert "no class or function 'Missing' in the module" in outcome.detail


@pytest.mark.parametrize(("pattern", "source", "found"), [
    # A bare statement metavariable takes any statement, compound ones too.
    ("$S\nreturn out", "if v1:\n    out = 1\nreturn out\n", 1),
    ("$...HEAD\nreturn out", "x = 1\nreturn out\n", 1),
    # A metavariable among the small statements of one line takes any of them.
    ("x = 1; $X", "x = 1; y = 2\n", 1),
    # Assignments: a metavariable target takes any name; an attribute target is compared as code.
    ("$T = compute()", "y = compute()\n", 1),
    ("self.out = compute()", "self.out = compute()\nself.other = compute()\n", 1),
    ("a = b = f()", "a = b = f()\na = f()\n", 1),
    ("a = f()", "a = b = f()\n", 0),
    ("out = f()", "result = f()\n", 0),
    ("out = f(); log()", "out = f()\n", 0),
])
def test_the_quick_first_statement_test_never_skips_a_match(pattern: str, source: str, found: int) -> None:
    assert len(find_statements(Pattern.parse(pattern), cst.parse_module(source))) == found


def test_a_marker_may_be_an_expression_inside_a_statement() -> None:
    from patcher.transforms.pattern import contains

    module = cst.parse_module("def f(max_seq_len):\n    use_v1 = max_seq_len <= 8192\n    return use_v1\n")
    assert contains(Pattern.parse("max_seq_len <= 8192"), module)
    assert not contains(Pattern.parse("max_seq_len <= 4096"), module)


def test_spliced_arguments_keep_their_line_breaks(run_steps) -> None:  # type: ignore[no-untyped-def]
    # The vendor wrote one argument a line: the rewritten call keeps that layout.
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "y = g($...ARGS)"
        code = "y = h($...ARGS)"
    '''
    patched, outcome = run_steps(steps, "y = g(\n    a,\n    b,\n)\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "y = h(\n    a,\n    b,\n)\n"


def test_a_target_that_does_not_parse_names_its_line() -> None:
    from patcher.transforms.pattern import describe_syntax_error

    with pytest.raises(cst.ParserSyntaxError) as raised:
        cst.parse_module("x = 1\ndef f(:\n    pass\n")
    assert describe_syntax_error(raised.value) == "line 3, column 4: expected one of ), *, **, NAME"
