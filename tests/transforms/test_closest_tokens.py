"""How far code is from a pattern: the pattern's own tokens that differ, then the text, never a metavariable.

Ties in tokens go to the text more alike; a `$...X` stops where the next
statement differs in fewest tokens, the shortest run among equally close
ones; a block that ends counts as far as code sharing nothing; a long
statement counts only the tokens that differ.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.transforms.closest import find_closest
from patcher.transforms.pattern import Pattern
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import closest_in, closest_summary


def test_metavariables_are_not_counted_as_differences(module: cst.Module) -> None:
    closest = find_closest(Pattern.parse("out = ops.paged_attention_v2($Q, $K, 512)"), module,
                           find_scope(module, "PagedAttention.forward_decode"))
    # The pattern's own tokens '( , , 512 )' against '( query , key_cache )': 3 differ; the
    # metavariables' names would add two more.
    assert closest is not None and (closest.first_line, closest.differing_tokens) == (25, 3)


@pytest.mark.parametrize("order", [("y", "xxxxxxxx"), ("xxxxxxxx", "y")])
def test_equal_token_counts_go_to_the_text_more_alike(order: tuple[str, str]) -> None:
    first, second = order
    module = cst.parse_module(f"def f():\n    a = compute({first})\n    a = compute({second})\n    return a\n")
    closest = find_closest(Pattern.parse("a = compute(xxxxxxxz)\nreturn b"), module, find_scope(module, "f"))
    assert closest is not None and closest.code == "a = compute(xxxxxxxx)" and closest.differing_tokens == 1
    assert closest.first_line == 2 + order.index("xxxxxxxx")


@pytest.mark.parametrize(("code", "tail", "lines", "shown"), [
    # After `$...H` either copy of 'x = f(a)' matches: the run goes on to the
    # one whose next statement is fewer tokens away from the pattern's...
    (["return g(a, b)", "return g(a, b, c)"], "return g(a, b, d)", (2, 5), "return g(a, b, c)"),
    # ...tokens, not characters: ', 1' is two tokens, 'scale' against 's' one.
    (["y = compute(q, scale, 1)", "y = compute(q, s)"], "y = compute(q, scale)", (2, 5), "y = compute(q, s)"),
])
def test_a_sequence_stops_where_the_next_statement_differs_in_fewest_tokens(
        code: list[str], tail: str, lines: tuple[int, int], shown: str) -> None:
    body = "".join(f"    x = f(a)\n    {statement}\n" for statement in code)
    closest = closest_in(f"def f(a, b, c, q, s):\n{body}", f"$...H\nx = f(a)\n{tail}\n", "f")
    assert closest_summary(closest) == (*lines, 3, 2, tail, shown, "")
    assert closest is not None and closest.differing_tokens == 1


def test_a_sequence_takes_the_shortest_run_among_equally_close_ones() -> None:
    closest = closest_in('''\
        def f(m, m_new, corr):
            corr = torch.exp(m - m_new)
            m.copy_(m_blk)
            corr = torch.exp(m - m_new)
            m.copy_(m_cur)
        ''', "$...H\ncorr = torch.exp(m - m_new)\nm.copy_(m_new)\n", "f")
    assert closest_summary(closest) == (2, 3, 3, 2, "m.copy_(m_new)", "m.copy_(m_blk)", "")


def test_a_sequence_keeps_a_next_statement_that_differs_only_by_a_missing_capture() -> None:
    # 'synchronize()' lacks the device the pattern captures: no token of the
    # pattern's own differs, so no later run comes closer.
    closest = closest_in('''\
        def forward_decode(query, output):
            ops.paged_attention_v1(output, query)
            torch.cuda.synchronize()
            ops.paged_attention_v1(output, query)
            torch.cuda.synchronize(query.device, True)
            return output
        ''', "$...H\nops.paged_attention_v1(output, query)\ntorch.cuda.synchronize($DEV)\n", "forward_decode")
    assert closest_summary(closest) == (2, 3, 3, 2, "torch.cuda.synchronize($DEV)", "torch.cuda.synchronize()", "")
    assert closest is not None and closest.differing_tokens == 0


def test_code_that_differs_beats_a_block_that_ends_as_far_away() -> None:
    # Both runs match one statement; the next differs in six tokens from a `del` and
    # from the end of a block: a statement is named rather than "the block ends there".
    closest = closest_in('''\
        def f(z, w, v):
            if z:
                x = f(a)
            x = f(a)
            del z, w, v
        ''', "x = f(a)\ny = g(b)\n", "f")
    assert closest_summary(closest) == (4, 5, 2, 1, "y = g(b)", "del z, w, v", "")
    assert closest is not None and closest.differing_tokens == 6


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


# The vendor's phase-1 loop: one statement that is hundreds of tokens long.
PHASE_1 = '''\
for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):
    blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)
    blk_ids = block_tables[i, tile_blk:blk_end]
    k_tile = (key_cache[blk_ids].permute(0, 3, 1, 2, 4).contiguous().view(-1, num_kv_heads, head_dim))
    v_tile = (value_cache[blk_ids].permute(0, 3, 1, 2).contiguous().view(-1, num_kv_heads, head_dim))
    valid = (min(blk_end * block_size, ctx_len) - tile_blk * block_size)
    k_tile = k_tile[:valid]
    v_tile = v_tile[:valid]
    k_t = k_tile.permute(1, 0, 2).unsqueeze(1).transpose(-2, -1).float()
    v_t = v_tile.permute(1, 0, 2).unsqueeze(1).float()
    del k_tile, v_tile
    s = torch.matmul(q_seq, k_t)
    del k_t
    m_blk = s.amax(dim=-1)
    m_new = torch.maximum(m, m_blk)
    exp_s = s - m_new.unsqueeze(-1)
    del s
    exp_s.exp_()
    corr = torch.exp(m - m_new)
    m.copy_(m_new)
    del m_blk, m_new
    l.mul_(corr).add_(exp_s.sum(dim=-1))
    o.mul_(corr.unsqueeze(-1)).add_(torch.matmul(exp_s, v_t))
    del exp_s, v_t, corr
'''


def test_a_long_compound_statement_counts_only_the_tokens_that_differ() -> None:
    code = "def _forward_prefix_pytorch():\n" + textwrap.indent(PHASE_1.replace("blk_end * block_size", "blk_end * 16"), "    ")
    closest = closest_in(code, PHASE_1, "_forward_prefix_pytorch")
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.differing_tokens) == (2, 25, 1)
    assert (closest.inside, closest.pattern) == (
        "in its body, statement 5", "valid = min(blk_end * block_size, ctx_len) - tile_blk * block_size")


def test_a_drop_that_folded_a_statement_into_the_next_differs_in_those_tokens_only() -> None:
    # A new drop writes 'm_new = torch.maximum(m, s.amax(dim=-1))' and no 'm_blk':
    # the loop is ~300 tokens, among them '(' and ',' by the dozen, all compared.
    loop = PHASE_1.replace("    m_blk = s.amax(dim=-1)\n    m_new = torch.maximum(m, m_blk)\n",
                           "    m_new = torch.maximum(m, s.amax(dim=-1))\n").replace("del m_blk, m_new", "del m_new")
    closest = closest_in("def _forward_prefix_pytorch():\n" + textwrap.indent(loop, "    "), PHASE_1,
                         "_forward_prefix_pytorch")
    assert closest is not None and closest.differing_tokens == 18
    assert (closest.inside, closest.pattern, closest.code) == (
        "in its body, statement 13", "m_blk = s.amax(dim=-1)", "m_new = torch.maximum(m, s.amax(dim=-1))")


def test_between_long_statements_one_token_away_the_text_more_alike_wins() -> None:
    # Two drops' loops side by side, each one token from the pattern: 'k_t' renamed
    # 'k_tile_t' changes more characters than 'ctx_len' renamed 'context_len'.
    loops = [PHASE_1.replace("del k_t\n", "del k_tile_t\n"), PHASE_1.replace("ctx_len)", "context_len)")]
    code = "def _forward_prefix_pytorch():\n" + "".join(textwrap.indent(loop, "    ") for loop in loops)
    closest = closest_in(code, PHASE_1, "_forward_prefix_pytorch")
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.differing_tokens) == (26, 49, 1)
    assert (closest.inside, closest.code) == (
        "in its body, statement 5", "valid = min(blk_end * block_size, context_len) - tile_blk * block_size")
