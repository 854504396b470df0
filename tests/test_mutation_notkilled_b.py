"""Inputs a patch author can write that earlier tests left open (issue 13).

A statement pattern made of `$...X` alone takes the shortest run that is
not empty: one statement, in every block of the scope, never an empty run.
A pattern whose first line is indented deeper than the next is refused, not
silently re-indented. The closest-code report follows a `$...X` used twice
to the run where both agree, and a block that ends where the pattern goes
on counts as unlike as a statement with nothing in common.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.transforms.base import ConfigError, StepFailed, parse_pattern
from patcher.transforms.closest import find_closest
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern, PatternSyntaxError, find_statements
from patcher.transforms.replace import Replace
from patcher.transforms.scope import find_scope

NOTKILLED_B_DECODE = textwrap.dedent('''\
    def forward_decode(query, key_cache, block_tables):
        # the vendor's v2 path, three statements
        output = torch.empty_like(query)
        ops.paged_attention_v2(output, query, key_cache, block_tables)
        return output
    ''')


def _notkilled_b_runs(pattern: str, code: str) -> list[tuple[int, int, dict[str, int]]]:
    module = cst.parse_module(code)
    scope = find_scope(module, "forward_decode")
    return [(found.start, found.end,
             {name: len(value) for name, value in found.bindings.items() if isinstance(value, tuple)})
            for found in find_statements(Pattern.parse(pattern), scope)]


@pytest.mark.parametrize("pattern", ["$...BODY", "$...", "$...HEAD\n$...TAIL"])
def test_a_pattern_of_sequence_metavariables_alone_takes_one_statement_at_a_time(pattern: str) -> None:
    runs = _notkilled_b_runs(pattern, NOTKILLED_B_DECODE)
    assert [(start, end) for start, end, _ in runs] == [(0, 1), (1, 2), (2, 3)]
    for _, _, bound in runs:
        # The shortest run that is not empty; with two, the first stays empty.
        assert sum(bound.values()) == (1 if bound else 0)
        assert bound.get("BODY", 1) == 1 and bound.get("HEAD", 0) == 0


def test_an_insert_after_a_lone_sequence_metavariable_follows_every_statement() -> None:
    module = cst.parse_module(NOTKILLED_B_DECODE)
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


def test_a_trailing_sequence_metavariable_after_the_first_statement_stays_empty() -> None:
    runs = _notkilled_b_runs("output = $INIT\n$...REST", NOTKILLED_B_DECODE)
    assert runs == [(0, 1, {"REST": 0})]


@pytest.mark.parametrize("pattern", [
    "  use_v1 = True\nmax_num_partitions = 1",
    "    if use_v1:\n        $...V1\nelse:\n    $...V2",
])
def test_a_pattern_whose_first_line_is_indented_deeper_than_the_next_is_refused(pattern: str) -> None:
    with pytest.raises(PatternSyntaxError, match=r"^not valid Python at line 1, column \d+: "):
        Pattern.parse(pattern)
    with pytest.raises(ConfigError, match=r"pattern in 'pattern' is not valid Python at line 1, column \d+: "):
        parse_pattern("pattern", pattern)


NOTKILLED_B_PREFIX = textwrap.dedent('''\
    def _forward_prefix_pytorch(q_seq, k_t, o):
        s = torch.matmul(q_seq, k_t)
        m_blk = s.amax(dim=-1)
        del s
        # phase 2: the causal chunk, the same update
        s = torch.matmul(q_seq, k_t)
        m_blk = s.amax(dim=-1)
        del s
        return o
    ''')


def test_the_closest_code_follows_a_sequence_metavariable_used_twice() -> None:
    module = cst.parse_module(NOTKILLED_B_PREFIX)
    pattern = Pattern.parse("$...STEP\ndel s\n$...STEP\ndel s\nreturn out\n")
    closest = find_closest(pattern, module, find_scope(module, "_forward_prefix_pytorch"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched,
            closest.pattern, closest.code) == (2, 9, 5, 4, "return out", "return o")


def test_a_block_that_ends_where_the_pattern_goes_on_ties_with_code_sharing_nothing() -> None:
    # Both runs match 'out = attn(q)'; then one block ends and the other goes
    # on with 'pass' (another kind, no character of 'return out', as many
    # tokens): equally unlike, so the first found, the function's own block, is named.
    module = cst.parse_module(textwrap.dedent('''\
        def forward_decode(q, use_v1):
            if use_v1:
                out = attn(q)
                pass  # v1 writes into the buffer itself
            out = attn(q)
        '''))
    closest = find_closest(Pattern.parse("out = attn(q)\nreturn out\n"), module, find_scope(module, "forward_decode"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched,
            closest.pattern, closest.code, closest.differing_tokens) == (5, 5, 2, 1, "return out", "", 2)


def test_an_insert_before_an_anchor_keeps_the_insert_before_a_match_nested_in_it() -> None:
    # Both ifs match; the outer anchor used to be put back as found, dropping
    # the insert inside it while the step still counted two matches.
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


NOTKILLED_B_NESTED = textwrap.dedent('''\
    def forward_decode(query, use_v1, use_fp8):
        if use_v1:
            if use_fp8:  # e4m3
                query = query.float()
            out = v1(query)
            return out
        out = v2(query)
        return out
    ''')


def test_a_replace_whose_matches_nest_is_refused_rather_than_dropping_the_inner_one() -> None:
    # The outer replacement re-emits the body as found: the inner if's
    # rewrite used to vanish while the step counted two matches.
    module = cst.parse_module(NOTKILLED_B_NESTED)
    step = Replace(pattern=parse_pattern("pattern", "if $C:\n    $...BODY"),
                   code="if $C:\n    with nvtx.range('branch'):\n        $...BODY", expect=2)
    with pytest.raises(StepFailed, match=r"^'if \$C: / \$\.\.\.BODY' matches inside the code of another of its "
                                         r"matches; one replace cannot rewrite both \(narrow the pattern, or its scope\)$"):
        step.apply(module, "forward_decode")


def test_a_replace_with_side_by_side_matches_rewrites_each() -> None:
    module = cst.parse_module(NOTKILLED_B_NESTED)
    step = Replace(pattern=parse_pattern("pattern", "out = $CALL"), code="out = $CALL.contiguous()", expect=2)
    assert step.apply(module, "forward_decode").code == NOTKILLED_B_NESTED.replace(
        "v1(query)", "v1(query).contiguous()").replace("v2(query)", "v2(query).contiguous()")
