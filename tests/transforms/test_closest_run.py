"""The closest code a failing step names: the run of statements that matched longest, then differs least.

A run matching more statements wins, wherever it is in the block; among
runs as long, a statement of the pattern's own kind wins; a full match is
never "closest"; `$...X` runs take what lets the next statement come
closest; a metavariable bound earlier must agree later.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.records import Closest
from patcher.transforms.closest import find_closest
from patcher.transforms.pattern import Pattern
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import closest_in, closest_summary


def test_the_closest_run_names_its_lines_and_the_first_statement_that_differs(module: cst.Module) -> None:
    pattern = Pattern.parse("use_v1 = max_seq_len <= 8192\nif use_v1:\n    out = ops.paged_attention_v1(query, key_cache)\n"
                            "else:\n    out = ops.paged_attention_v2(query, key_cache, 512)\n")
    scope = find_scope(module, "PagedAttention.forward_decode")
    closest = find_closest(pattern, module, scope)
    assert closest == Closest(first_line=21, last_line=25, statement=2,
                              pattern="out = ops.paged_attention_v2(query, key_cache, 512)",
                              code="out = ops.paged_attention_v2(query, key_cache)", matched=1,
                              differing_tokens=closest.differing_tokens if closest else 0,
                              inside="in its else, statement 1")
    assert closest is not None and closest.differing_tokens == 2  # ',' and '512'
    assert closest.describe() == ("closest: lines 21-25, statement 2 differs (in its else, statement 1): "
                                  "pattern 'out = ops.paged_attention_v2(query, key_cache, 512)', "
                                  "code 'out = ops.paged_attention_v2(query, key_cache)'")


def test_the_closest_run_prefers_the_same_kind_of_statement(module: cst.Module) -> None:
    pattern = Pattern.parse("scale = query.shape[-1] ** 0.5\nreturn _tile(0) * scale")
    closest = find_closest(pattern, module, find_scope(module, "PagedAttention.forward_prefix"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (32, 32, 1, 0)
    assert closest.code == "scale = query.shape[-1] ** (-0.5)" and closest.inside == ""


def test_a_block_that_ends_first_is_said_so(module: cst.Module) -> None:
    pattern = Pattern.parse("return query @ key_cache\nprint('done')")
    closest = find_closest(pattern, module, find_scope(module, "_pytorch_decode"))
    assert closest is not None and closest.statement == 2 and closest.code == ""
    assert closest.describe().endswith("pattern 'print('done')', the block ends there")


def test_a_full_match_is_not_a_closest_one(module: cst.Module) -> None:
    pattern = Pattern.parse("return query @ key_cache")
    assert find_closest(pattern, module, find_scope(module, "_pytorch_decode")) is None


# The online-softmax update twice, as phase 1 (context) and phase 2 (causal
# chunk) of the vendor's _forward_prefix_pytorch write it; a new drop changed
# the second one's broadcast.
SOFTMAX = '''\
def _forward_prefix_pytorch(q_seq, k_t, v_t, m, l, o):
    s = torch.matmul(q_seq, k_t)
    m_blk = s.amax(dim=-1)
    m_new = torch.maximum(m, m_blk)
    exp_s = s - m_new.unsqueeze(-1)
    del s
    # phase 2: the causal chunk
    s = torch.matmul(q_seq, k_t)
    m_blk = s.amax(dim=-1)
    m_new = torch.maximum(m, m_blk)
    exp_s = s - m_new[..., None]
    del s
    return o
'''


def test_one_full_match_of_two_expected_points_at_the_other_one() -> None:
    # `expect = 2` found it once: the closest is the update that changed, after the one that matched.
    closest = closest_in(SOFTMAX, "m_new = torch.maximum(m, m_blk)\nexp_s = s - m_new.unsqueeze(-1)\n",
                         "_forward_prefix_pytorch")
    assert closest_summary(closest) == (10, 11, 2, 1, "exp_s = s - m_new.unsqueeze(-1)", "exp_s = s - m_new[..., None]", "")


def test_a_run_further_down_the_block_that_matches_more_wins() -> None:
    # Phase 1's 'm_new = ...' matches one statement, the statements after it
    # none, phase 2's three: the search goes on past the runs that match less.
    closest = closest_in(SOFTMAX, "m_new = torch.maximum(m, m_blk)\nexp_s = s - m_new[..., None]\ndel s\nreturn out\n",
                         "_forward_prefix_pytorch")
    assert closest_summary(closest) == (10, 13, 4, 3, "return out", "return o", "")


def test_a_statement_of_the_same_kind_beats_a_shorter_one_of_another_kind() -> None:
    # 'm = m_new' is fewer tokens from the pattern, but the pattern is a call: the call is named.
    closest = closest_in('''\
        def update(m, m_new, m_blk):
            m = m_new
            m.copy_(torch.maximum(m, m_blk))
        ''', "m.copy_(m_new)", "update")
    assert closest_summary(closest) == (3, 3, 1, 0, "m.copy_(m_new)", "m.copy_(torch.maximum(m, m_blk))", "")
    assert closest is not None and closest.differing_tokens == 8


def test_a_name_bound_earlier_must_agree_later() -> None:
    # The new drop returns another tensor than the one it allocated: that is the difference.
    code = '''\
        def forward_decode(query):
            output = torch.empty_like(query)
            result = ops.paged_attention_v1(output, query)
            return result
        '''
    closest = closest_in(code, "$OUT = torch.empty_like(query)\n$...CALLS\nreturn $OUT\n", "forward_decode")
    assert closest_summary(closest) == (2, 4, 3, 2, "return $OUT", "return result", "")
    closest = closest_in(code, "$OUT = torch.empty_like(query)\nreturn $OUT\n", "forward_decode")
    assert closest_summary(closest) == (2, 3, 2, 1, "return $OUT", "result = ops.paged_attention_v1(output, query)", "")


def test_statements_after_a_leading_sequence_count_as_matched() -> None:
    closest = closest_in('''\
        def forward_decode(query, max_seq_len):
            block_size = 16
            use_v1 = max_seq_len <= 8192
            use_v1 = True
            if use_v1:
                out = ops.paged_attention_v1(query)
            return out
        ''', "$...SETUP\nuse_v1 = max_seq_len <= 8192\nuse_v1 = True\nreturn out\n", "forward_decode")
    assert closest_summary(closest) == (2, 6, 4, 3, "return out", "if use_v1: ...", "")


def test_a_sequence_that_lets_every_statement_match_is_no_closest() -> None:
    # Found where expected a different number of times: nothing half-matched to show.
    code = '''\
        def forward_decode(query):
            output = torch.empty_like(query)
            ops.paged_attention_v1(output, query)
            return output
        '''
    assert closest_in(code, "$...BODY\nreturn output\n", "forward_decode") is None
    # In the middle: the full match is passed over, the other runs are what is left to show.
    closest = closest_in(code, "output = torch.empty_like(query)\n$...CALLS\nreturn output\n", "forward_decode")
    assert closest_summary(closest) == (4, 4, 1, 0, "output = torch.empty_like(query)", "return output", "")


def test_a_pattern_that_goes_on_past_the_block_says_the_block_ends() -> None:
    # Whatever `$...BODY` takes, 'return out' is the block's last statement.
    closest = closest_in('''\
        def forward_decode(query):
            block_size = 16
            out = ops.paged_attention_v1(query, block_size)
            return out
        ''', "$...BODY\nreturn out\nprint('decode done')\n", "forward_decode")
    assert closest_summary(closest) == (2, 4, 3, 2, "print('decode done')", "", "")


@pytest.mark.parametrize(("pattern", "lines"), [
    ("use_v1 = $X\n$...MID\nreturn result", (21, 26)),
    ("use_v1 = max_seq_len <= $LIMIT\n$...\nreturn result", (21, 26)),
])
def test_a_sequence_in_the_middle_takes_what_lets_the_next_statement_come_closest(
        module: cst.Module, pattern: str, lines: tuple[int, int]) -> None:
    # `$...MID` could stop before the if (then 'return result' meets the whole
    # if) or take it (then it meets 'return out'): the second is the difference.
    closest = find_closest(Pattern.parse(pattern), module, find_scope(module, "PagedAttention.forward_decode"))
    assert closest is not None
    assert ((closest.first_line, closest.last_line), closest.statement, closest.matched) == (lines, 3, 2)
    assert (closest.pattern, closest.code, closest.differing_tokens) == ("return result", "return out", 1)


TWO_PHASES = textwrap.dedent('''\
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
    module = cst.parse_module(TWO_PHASES)
    pattern = Pattern.parse("$...STEP\ndel s\n$...STEP\ndel s\nreturn out\n")
    closest = find_closest(pattern, module, find_scope(module, "_forward_prefix_pytorch"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched,
            closest.pattern, closest.code) == (2, 9, 5, 4, "return out", "return o")
