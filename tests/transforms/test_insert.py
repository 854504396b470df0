"""``insert`` puts its code right before or after each anchor, at the anchor's indentation.

Blank lines above an anchor go above the new code, the anchor's comments
stay on the anchor; an anchor found more or fewer times than expected
fails the step; an anchor nested in another match keeps its own insert.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.base import StepFailed, parse_pattern
from patcher.transforms.insert import Insert

from tests.fixtures_patches import insert_step
from tests.transforms.conftest import V2_DECODE


INSERT_AFTER = insert_step("after", "total = $START", "count = $START")


def test_insert_after_puts_the_code_after_the_anchor(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def f(items):\n    total = 0  # running sum\n    for i in items:\n        total += i\n    return total\n"
    header = 'applied-when = ["count = $_"]\n'
    patched, outcome = run_steps(header + INSERT_AFTER, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == (
        "def f(items):\n    total = 0  # running sum\n    count = 0\n    for i in items:\n"
        "        total += i\n    return total\n"
    )
    again, outcome = run_steps(header + INSERT_AFTER, patched, scope="f")
    assert outcome.status is Status.ALREADY_APPLIED and again == patched


def test_insert_after_the_last_statement_of_a_nested_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def f(items):\n    for i in items:\n        total = i\n    return 1\n"
    patched, outcome = run_steps(INSERT_AFTER, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == (
        "def f(items):\n    for i in items:\n        total = i\n        count = i\n    return 1\n"
    )


def test_insert_after_each_of_two_anchors(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = insert_step("after", "$OUT = ops.paged_attention_v1($...)", "torch.cuda.synchronize()", expect=2)
    source = ("def f(q):\n    a = ops.paged_attention_v1(q)\n    log(a)\n    b = ops.paged_attention_v1(q)\n"
              "    return a, b\n")
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(q):\n    a = ops.paged_attention_v1(q)\n    torch.cuda.synchronize()\n    log(a)\n"
                       "    b = ops.paged_attention_v1(q)\n    torch.cuda.synchronize()\n    return a, b\n")


def test_insert_after_an_anchor_found_twice_fails(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "total = 0\ntotal = 1\n"
    patched, outcome = run_steps(INSERT_AFTER, source)
    assert outcome.status is Status.FAILED
    assert "expected the anchor 'total = $START' once, found it 2 times" in outcome.detail
    assert patched == source


def test_an_insert_after_a_lone_sequence_metavariable_follows_every_statement() -> None:
    module = cst.parse_module(V2_DECODE)
    step = Insert(anchor=parse_pattern("after", "$...BODY"), position="after", code="torch.cuda.synchronize()", expect=3)
    assert step.apply(module, "forward_decode").code == textwrap.dedent('''\
        def forward_decode(query, key_cache, block_tables):
            # the vendor's v2 path, three statements
            output = torch.empty_like(query)
            torch.cuda.synchronize()
            ops.paged_attention_v2(output, query, key_cache, block_tables)
            torch.cuda.synchronize()
            return output
            torch.cuda.synchronize()
        ''')
    # Written for "the whole body once", it fails on the count instead of editing.
    once = Insert(anchor=parse_pattern("after", "$...BODY"), position="after", code="torch.cuda.synchronize()")
    with pytest.raises(StepFailed, match=r"^expected the anchor '\$\.\.\.BODY' once, found it 3 times$"):
        once.apply(module, "forward_decode")


def test_insert_before_gives_the_blank_line_to_the_code_and_leaves_the_comment_on_the_anchor(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = insert_step("before", "use_v1 = $COND", "max_seq_len = min(max_seq_len, _LIMIT)")
    source = "def f(max_seq_len):\n    x = 1\n\n    # V1 below 8K\n    use_v1 = max_seq_len <= 8192\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(max_seq_len):\n    x = 1\n\n    max_seq_len = min(max_seq_len, _LIMIT)\n\n"
                       "    # V1 below 8K\n    use_v1 = max_seq_len <= 8192\n")


Y_BEFORE_X = insert_step("before", "x = $A", "y = $A")


def test_insert_before_keeps_blank_lines_above_the_new_code_and_comments_on_the_anchor(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "a = 0\n\n\n# about x\nx = 1\n"
    patched, outcome = run_steps(Y_BEFORE_X, source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "a = 0\n\n\ny = 1\n\n# about x\nx = 1\n"


def test_insert_before_an_anchor_with_no_blank_line_above(run_steps) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(Y_BEFORE_X, "a = 0\n# about x\nx = 1\nz = 2\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "a = 0\ny = 1\n# about x\nx = 1\nz = 2\n"


def test_insert_before_an_anchor_below_a_blank_line_and_no_comment(run_steps) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(Y_BEFORE_X, "a = 0\n\nx = 1\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "a = 0\n\ny = 1\n\nx = 1\n"


def test_a_comment_of_several_lines_stays_whole_on_the_anchor(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "a = 0\n\n# about x:\n# it must come last\nx = 1\n"
    patched, outcome = run_steps(Y_BEFORE_X, source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "a = 0\n\ny = 1\n\n# about x:\n# it must come last\nx = 1\n"


def test_an_insert_before_an_anchor_keeps_the_insert_before_a_match_nested_in_it() -> None:
    # Both ifs match; were the outer anchor put back as found, the insert
    # inside it would be dropped while the step still counted two matches.
    module = cst.parse_module(textwrap.dedent('''\
        def forward_decode(query, use_v1, use_fp8):

            # v1 only below 8192 tokens
            if use_v1:
                if use_fp8:  # e4m3
                    query = query.float()
                out = v1(query)
            return out
        '''))
    step = Insert(anchor=parse_pattern("before", "if $C:\n    $...BODY"), position="before",
                  code="torch.cuda.synchronize()", expect=2)
    assert step.apply(module, "forward_decode").code == textwrap.dedent('''\
        def forward_decode(query, use_v1, use_fp8):

            torch.cuda.synchronize()

            # v1 only below 8192 tokens
            if use_v1:
                torch.cuda.synchronize()
                if use_fp8:  # e4m3
                    query = query.float()
                out = v1(query)
            return out
        ''')
