"""Closest code and fingerprints on the shapes new vendor drops take: which run wins, its lines, its texts.

These pin what ``patcher upgrade`` and a failing step's message show: the run
of statements named as closest (ties, kinds, `$...X` runs, metavariables
bound earlier), the lines in the file as read when earlier steps moved or
rewrote code, the one-line texts, and the hashes a manifest keeps.
"""

from __future__ import annotations

import ast
import sys
import textwrap

import libcst as cst
import pytest

from patcher.records import Closest
from patcher.transforms.closest import close_scopes, find_closest, line_mapper, one_line, written_lines
from patcher.transforms.fingerprint import fingerprint, step_print
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern
from patcher.transforms.replace import Replace
from patcher.transforms.scope import find_scope


def _closest(code: str, pattern: str, scope: str) -> Closest | None:
    module = cst.parse_module(textwrap.dedent(code))
    return find_closest(Pattern.parse(textwrap.dedent(pattern)), module, find_scope(module, scope))


def _summary(closest: Closest | None) -> tuple[object, ...]:
    assert closest is not None
    return (closest.first_line, closest.last_line, closest.statement, closest.matched,
            closest.pattern, closest.code, closest.inside)


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
    closest = _closest(SOFTMAX, "m_new = torch.maximum(m, m_blk)\nexp_s = s - m_new.unsqueeze(-1)\n",
                       "_forward_prefix_pytorch")
    assert _summary(closest) == (10, 11, 2, 1, "exp_s = s - m_new.unsqueeze(-1)", "exp_s = s - m_new[..., None]", "")


def test_a_run_further_down_the_block_that_matches_more_wins() -> None:
    # Phase 1's 'm_new = ...' matches one statement, the statements after it
    # none, phase 2's three: the search goes on past the runs that match less.
    closest = _closest(SOFTMAX, "m_new = torch.maximum(m, m_blk)\nexp_s = s - m_new[..., None]\ndel s\nreturn out\n",
                       "_forward_prefix_pytorch")
    assert _summary(closest) == (10, 13, 4, 3, "return out", "return o", "")


def test_a_statement_of_the_same_kind_beats_a_shorter_one_of_another_kind() -> None:
    # 'm = m_new' is fewer tokens from the pattern, but the pattern is a call: the call is named.
    closest = _closest('''\
        def update(m, m_new, m_blk):
            m = m_new
            m.copy_(torch.maximum(m, m_blk))
        ''', "m.copy_(m_new)", "update")
    assert _summary(closest) == (3, 3, 1, 0, "m.copy_(m_new)", "m.copy_(torch.maximum(m, m_blk))", "")
    assert closest is not None and closest.differing_tokens == 8


def test_a_compound_statement_of_the_same_kind_beats_a_shorter_one_of_another_kind() -> None:
    # The pattern's `if` meets a `while` one token away and an `if` four tokens away: the `if` is named.
    closest = _closest('''\
        def forward_decode(seq_lens, max_seq_len):
            while seq_lens.numel() > 0:
                actual_max = int(seq_lens.max().item())
            if seq_lens.numel() > 0 and max_seq_len > 8192:
                actual_max = int(seq_lens.max().item())
            return actual_max
        ''', "if seq_lens.numel() > 0:\n    actual_max = int(seq_lens.max().item())\n", "forward_decode")
    assert _summary(closest) == (4, 5, 1, 0, "if seq_lens.numel() > 0: ...",
                                 "if seq_lens.numel() > 0 and max_seq_len > 8192: ...", "")


def test_statements_of_different_compound_kinds_differ_as_a_whole() -> None:
    # The V1 call now sits under a lock instead of a flag: the `if` and the
    # `with` differ as a whole, whatever their bodies hold.
    closest = _closest('''\
        def forward_decode(output, query, key_cache):
            with _DECODE_LOCK:
                ops.paged_attention_v1(output, query, key_cache)
            return output
        ''', "if use_v1:\n    ops.paged_attention_v1(output, query)\n", "forward_decode")
    assert _summary(closest) == (2, 3, 1, 0, "if use_v1: ...", "with _DECODE_LOCK: ...", "")


def test_one_line_blocks_are_compared_statement_by_statement() -> None:
    # `else: out = ...` on one line holds the same statement as its indented form.
    closest = _closest('''\
        def forward_decode(query, key_cache, use_v1):
            if use_v1: out = ops.paged_attention_v1(query, key_cache)
            else: out = ops.paged_attention_v2(query, key_cache)
            return out
        ''', "if use_v1:\n    out = ops.paged_attention_v1(query, key_cache)\nelse:\n"
             "    out = ops.paged_attention_v2(query, key_cache, 512)\n", "forward_decode")
    assert _summary(closest) == (2, 3, 1, 0, "out = ops.paged_attention_v2(query, key_cache, 512)",
                                 "out = ops.paged_attention_v2(query, key_cache)", "in its else, statement 1")


def test_a_match_statement_is_compared_whole() -> None:
    # Python 3.10 syntax the image reads: a `match` has cases, not a body.
    closest = _closest('''\
        def pick(kind):
            match kind:
                case "v1":
                    return 1
        ''', 'match kind:\n    case "v2":\n        return 2\n', "pick")
    assert _summary(closest) == (2, 4, 1, 0, "match kind: ...", "match kind: ...", "")


def test_a_name_bound_earlier_must_agree_later() -> None:
    # The new drop returns another tensor than the one it allocated: that is the difference.
    code = '''\
        def forward_decode(query):
            output = torch.empty_like(query)
            result = ops.paged_attention_v1(output, query)
            return result
        '''
    closest = _closest(code, "$OUT = torch.empty_like(query)\n$...CALLS\nreturn $OUT\n", "forward_decode")
    assert _summary(closest) == (2, 4, 3, 2, "return $OUT", "return result", "")
    closest = _closest(code, "$OUT = torch.empty_like(query)\nreturn $OUT\n", "forward_decode")
    assert _summary(closest) == (2, 3, 2, 1, "return $OUT", "result = ops.paged_attention_v1(output, query)", "")


def test_statements_after_a_leading_sequence_count_as_matched() -> None:
    closest = _closest('''\
        def forward_decode(query, max_seq_len):
            block_size = 16
            use_v1 = max_seq_len <= 8192
            use_v1 = True
            if use_v1:
                out = ops.paged_attention_v1(query)
            return out
        ''', "$...SETUP\nuse_v1 = max_seq_len <= 8192\nuse_v1 = True\nreturn out\n", "forward_decode")
    assert _summary(closest) == (2, 6, 4, 3, "return out", "if use_v1: ...", "")


def test_a_sequence_that_lets_every_statement_match_is_no_closest() -> None:
    # Found where expected a different number of times: nothing half-matched to show.
    code = '''\
        def forward_decode(query):
            output = torch.empty_like(query)
            ops.paged_attention_v1(output, query)
            return output
        '''
    assert _closest(code, "$...BODY\nreturn output\n", "forward_decode") is None
    # In the middle: the full match is passed over, the other runs are what is left to show.
    closest = _closest(code, "output = torch.empty_like(query)\n$...CALLS\nreturn output\n", "forward_decode")
    assert _summary(closest) == (4, 4, 1, 0, "output = torch.empty_like(query)", "return output", "")


def test_a_pattern_that_goes_on_past_the_block_says_the_block_ends() -> None:
    # Whatever `$...BODY` takes, 'return out' is the block's last statement.
    closest = _closest('''\
        def forward_decode(query):
            block_size = 16
            out = ops.paged_attention_v1(query, block_size)
            return out
        ''', "$...BODY\nreturn out\nprint('decode done')\n", "forward_decode")
    assert _summary(closest) == (2, 4, 3, 2, "print('decode done')", "", "")


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
    closest = _closest(f"def f(a, b, c, q, s):\n{body}", f"$...H\nx = f(a)\n{tail}\n", "f")
    assert _summary(closest) == (*lines, 3, 2, tail, shown, "")
    assert closest is not None and closest.differing_tokens == 1


def test_a_sequence_takes_the_shortest_run_among_equally_close_ones() -> None:
    closest = _closest('''\
        def f(m, m_new, corr):
            corr = torch.exp(m - m_new)
            m.copy_(m_blk)
            corr = torch.exp(m - m_new)
            m.copy_(m_cur)
        ''', "$...H\ncorr = torch.exp(m - m_new)\nm.copy_(m_new)\n", "f")
    assert _summary(closest) == (2, 3, 3, 2, "m.copy_(m_new)", "m.copy_(m_blk)", "")


def test_a_sequence_keeps_a_next_statement_that_differs_only_by_a_missing_capture() -> None:
    # 'synchronize()' lacks the device the pattern captures: no token of the
    # pattern's own differs, so no later run comes closer.
    closest = _closest('''\
        def forward_decode(query, output):
            ops.paged_attention_v1(output, query)
            torch.cuda.synchronize()
            ops.paged_attention_v1(output, query)
            torch.cuda.synchronize(query.device, True)
            return output
        ''', "$...H\nops.paged_attention_v1(output, query)\ntorch.cuda.synchronize($DEV)\n", "forward_decode")
    assert _summary(closest) == (2, 3, 3, 2, "torch.cuda.synchronize($DEV)", "torch.cuda.synchronize()", "")
    assert closest is not None and closest.differing_tokens == 0


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
    closest = _closest(code, PHASE_1, "_forward_prefix_pytorch")
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.differing_tokens) == (2, 25, 1)
    assert (closest.inside, closest.pattern) == (
        "in its body, statement 5", "valid = min(blk_end * block_size, ctx_len) - tile_blk * block_size")


def test_a_drop_that_folded_a_statement_into_the_next_differs_in_those_tokens_only() -> None:
    # A new drop writes 'm_new = torch.maximum(m, s.amax(dim=-1))' and no 'm_blk':
    # the loop is ~300 tokens, among them '(' and ',' by the dozen, all compared.
    loop = PHASE_1.replace("    m_blk = s.amax(dim=-1)\n    m_new = torch.maximum(m, m_blk)\n",
                           "    m_new = torch.maximum(m, s.amax(dim=-1))\n").replace("del m_blk, m_new", "del m_new")
    closest = _closest("def _forward_prefix_pytorch():\n" + textwrap.indent(loop, "    "), PHASE_1,
                       "_forward_prefix_pytorch")
    assert closest is not None and closest.differing_tokens == 18
    assert (closest.inside, closest.pattern, closest.code) == (
        "in its body, statement 13", "m_blk = s.amax(dim=-1)", "m_new = torch.maximum(m, s.amax(dim=-1))")


def test_between_long_statements_one_token_away_the_text_more_alike_wins() -> None:
    # Two drops' loops side by side, each one token from the pattern: 'k_t' renamed
    # 'k_tile_t' changes more characters than 'ctx_len' renamed 'context_len'.
    loops = [PHASE_1.replace("del k_t\n", "del k_tile_t\n"), PHASE_1.replace("ctx_len)", "context_len)")]
    code = "def _forward_prefix_pytorch():\n" + "".join(textwrap.indent(loop, "    ") for loop in loops)
    closest = _closest(code, PHASE_1, "_forward_prefix_pytorch")
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.differing_tokens) == (26, 49, 1)
    assert (closest.inside, closest.code) == (
        "in its body, statement 5", "valid = min(blk_end * block_size, context_len) - tile_blk * block_size")


def test_code_that_differs_beats_a_block_that_ends_as_far_away() -> None:
    # Both runs match one statement; the next differs in six tokens from a `del` and
    # from the end of a block: a statement is named rather than "the block ends there".
    closest = _closest('''\
        def f(z, w, v):
            if z:
                x = f(a)
            x = f(a)
            del z, w, v
        ''', "x = f(a)\ny = g(b)\n", "f")
    assert _summary(closest) == (4, 5, 2, 1, "y = g(b)", "del z, w, v", "")
    assert closest is not None and closest.differing_tokens == 6


def test_an_exactly_hundred_character_statement_is_shown_whole() -> None:
    text = "use_v1 = max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512) and flag_ab"
    assert len(text) == 100
    assert one_line(cst.parse_module(text + "\n").body[0]) == text
    assert one_line(cst.parse_module(text + "x\n").body[0]) == text[:97] + "..."


def test_code_this_python_cannot_read_is_shown_without_comments() -> None:
    # libcst reads a 3.12 `type` statement that Python 3.10 and 3.11 do not: the
    # line is shown as written, its comments left out, as `ast` would show it.
    code = "if TYPE_CHECKING:\n    # shapes\n    type Shape = tuple[int, int]\n"
    assert one_line(cst.parse_module(code).body[0]) == "if TYPE_CHECKING: ..."
    module = cst.parse_module("import torch\n\n# the cache layout\ntype Shape = tuple[int, int]\n")
    assert one_line(module.body[1]) == "type Shape = tuple[int, int]"


NAMES = '''\
class PagedAttention:
    def forward_decode(self): ...
    def forward_prefix(self): ...
    def _forward_decode_pytorch(self): ...
    def _forward_prefix_pytorch(self): ...


def swap_blocks(): ...
'''


@pytest.mark.parametrize(("asked", "limit", "expected"), [
    # Names similar at 0.596 and 0.545 of the whole are still offered.
    ("Attention.decode_v2", 3, ("PagedAttention.forward_decode", "PagedAttention._forward_decode_pytorch",
                                "PagedAttention")),
    # The class renamed past recognition: methods by their own names (0.727,
    # then 0.516 for the PyTorch fallbacks), as many as asked.
    ("zzzzzzzzzzzzzzzzzzzzzzzzzzzz.forward_", 1, ("PagedAttention.forward_prefix",)),
    ("zzzzzzzzzzzzzzzzzzzzzzzzzzzz.forward_", 4, ("PagedAttention.forward_prefix", "PagedAttention.forward_decode",
                                                  "PagedAttention._forward_prefix_pytorch",
                                                  "PagedAttention._forward_decode_pytorch")),
])
def test_close_scopes_cutoff_and_limit(asked: str, limit: int, expected: tuple[str, ...]) -> None:
    assert close_scopes(cst.parse_module(NAMES), asked, limit=limit) == expected


# Lines of the file as read, after earlier steps of the patch moved or rewrote code.
DECODE = '''\
_PARTITION_SIZE = 512


class PagedAttention:
    @staticmethod
    def forward_decode(query, key_cache, max_seq_len):
        use_v1 = max_seq_len <= 8192
        if use_v1:
            out = ops.paged_attention_v1(query, key_cache)
        else:
            out = ops.paged_attention_v2(query, key_cache)
        return out
'''
V1_V2 = ("if use_v1:\n    out = ops.paged_attention_v1(query, key_cache, scale)\nelse:\n"
         "    out = ops.paged_attention_v2(query, key_cache)\n")


def _grown(module: cst.Module) -> cst.Module:
    # Two lines above the class, then the V2 call rewritten in place: the `if` is rebuilt.
    grown = Replace(pattern=Pattern.parse("_PARTITION_SIZE = 512"),
                    code="_PARTITION_SIZE = 512\n_EXTRA = 1\n_MORE = 2\n", expect=1).apply(module, "")
    return Replace(pattern=Pattern.parse("out = ops.paged_attention_v2(query, key_cache)"),
                   code="out = ops.paged_attention_v2(query, key_cache, 512)", expect=1).apply(
        grown, "PagedAttention.forward_decode")


def test_a_run_through_rewritten_code_is_named_by_the_lines_as_read() -> None:
    module = cst.parse_module(DECODE)
    grown = _grown(module)
    scope = find_scope(grown, "PagedAttention.forward_decode")
    # The `if` ends on a line the second step wrote: the range still ends at the vendor's line 11.
    as_read = find_closest(Pattern.parse(V1_V2), grown, scope, module)
    assert _summary(as_read)[:3] == (8, 11, 1)
    assert _summary(find_closest(Pattern.parse(V1_V2), grown, scope))[:3] == (10, 13, 1)
    as_read = find_closest(Pattern.parse("use_v1 = max_seq_len <= 8192\n" + V1_V2), grown, scope, module)
    assert _summary(as_read)[:5] == (7, 11, 2, 1, "out = ops.paged_attention_v1(query, key_cache, scale)")


def test_a_run_starting_at_a_block_only_moved_names_the_block_s_first_line() -> None:
    # Lines added above the class: the untouched `if` (vendor lines 8-11) is named from 8.
    module = cst.parse_module(DECODE)
    grown = Replace(pattern=Pattern.parse("_PARTITION_SIZE = 512"),
                    code="_PARTITION_SIZE = 512\n_EXTRA = 1\n_MORE = 2\n", expect=1).apply(module, "")
    scope = find_scope(grown, "PagedAttention.forward_decode")
    assert _summary(find_closest(Pattern.parse(V1_V2), grown, scope, module))[:4] == (8, 11, 1, 0)
    assert _summary(find_closest(Pattern.parse(V1_V2), grown, scope))[:4] == (10, 13, 1, 0)


def test_a_run_ending_in_added_lines_ends_at_the_vendor_line_before_them() -> None:
    module = cst.parse_module(DECODE)
    grown = Insert(anchor=Pattern.parse("out = ops.paged_attention_v2(query, key_cache)"), position="after",
                   code="torch.cuda.synchronize()\nout = out.contiguous()\n", expect=1).apply(
        module, "PagedAttention.forward_decode")
    as_read = find_closest(Pattern.parse(V1_V2), grown, find_scope(grown, "PagedAttention.forward_decode"), module)
    assert _summary(as_read)[:2] == (8, 11)


def test_a_vendor_statement_after_an_inserted_copy_of_itself_keeps_its_line() -> None:
    # One step put a `torch.cuda.synchronize()` above the vendor's own, another
    # rewrote the call after it: a line diff now takes the vendor's line for one
    # the patch wrote, and the added copy for the vendor's. The nodes do not.
    module = cst.parse_module('''\
def forward_decode(query, key_cache):
    output = torch.empty_like(query)
    torch.cuda.synchronize()
    ops.paged_attention_v1(output, query, key_cache)
    return output
''')
    grown = Insert(anchor=Pattern.parse("output = torch.empty_like(query)"), position="after",
                   code="torch.cuda.synchronize()\n", expect=1).apply(module, "forward_decode")
    grown = Replace(pattern=Pattern.parse("ops.paged_attention_v1(output, query, key_cache)"),
                    code="ops.paged_attention_v1(output, query, key_cache, 1.0)", expect=1).apply(
        grown, "forward_decode")
    scope = find_scope(grown, "forward_decode")
    # The vendor's synchronize and the rewritten call: vendor lines 3-4, ranked as the vendor's.
    pattern = Pattern.parse("torch.cuda.synchronize()\nops.paged_attention_v1(output, query, key_cache, 2.0)")
    assert _summary(find_closest(pattern, grown, scope, module))[:6] == (
        3, 4, 2, 1, "ops.paged_attention_v1(output, query, key_cache, 2.0)",
        "ops.paged_attention_v1(output, query, key_cache, 1.0)")
    # The added copy, then the vendor's: the run ends on the vendor's line 3.
    pattern = Pattern.parse("torch.cuda.synchronize()\ntorch.cuda.synchronize(query.device)")
    assert _summary(find_closest(pattern, grown, scope, module))[:6] == (
        3, 3, 2, 1, "torch.cuda.synchronize(query.device)", "torch.cuda.synchronize()")


def test_line_mapper_next_to_and_inside_a_rewritten_region() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nB\nB2\nc\nd\n"
    back = line_mapper(before, after)
    assert [back(line) for line in range(1, 6)] == [1, 2, 2, 3, 4]
    assert [back(line, end=True) for line in range(1, 6)] == [1, 2, 2, 3, 4]
    grown = line_mapper("a\nb\nc\n", "a\nb\nX\nY\nc\n")
    assert [grown(line) for line in range(1, 6)] == [1, 2, 3, 3, 3]
    assert [grown(line, end=True) for line in range(1, 6)] == [1, 2, 2, 2, 3]
    # Two lines rewritten as one: it stands for both, from the first to the last.
    shrunk = line_mapper("a\nb\nc\nd\n", "a\nX\nd\n")
    assert [shrunk(line) for line in range(1, 4)] == [1, 2, 4]
    assert [shrunk(line, end=True) for line in range(1, 4)] == [1, 3, 4]
    top = line_mapper("a\n", "X\na\n")
    assert (top(1), top(1, end=True), top(2)) == (1, 1, 1)


def _vendor_file(lines: int) -> str:
    # A long file as vendors write them: blank lines, `del`s and brackets repeat.
    block = "\n    del s\n    x = f(\n        a,\n    )\n"
    return "".join(f"def f{n}():{block}" for n in range(lines // 6))


def test_line_numbers_in_a_long_file_follow_repeated_lines() -> None:
    before = _vendor_file(600)
    after = before.replace("def f50():", "def f50():\n    torch.cuda.synchronize()", 1)
    at = after.splitlines().index("def f90():") + 1
    assert line_mapper(before, after)(at) == at - 1
    assert written_lines(before, after) == frozenset({after.splitlines().index("    torch.cuda.synchronize()") + 1})
    # A step wraps one of the hundred `del s` lines in synchronisations: the
    # `del s` between them is the vendor's line, not one the step wrote.
    after = before.replace("def f2():\n    del s\n",
                           "def f2():\n    torch.cuda.synchronize()\n    del s\n    torch.cuda.synchronize()\n", 1)
    assert written_lines(before, after) == frozenset({12, 14})
    back = line_mapper(before, after)
    assert [back(line) for line in range(11, 16)] == [11, 12, 12, 13, 13]


# Fingerprints.

def test_the_layout_of_a_captured_argument_run_is_not_a_binding() -> None:
    module = cst.parse_module(DECODE)
    step = Replace(pattern=Pattern.parse("out = ops.paged_attention_v1($...ARGS)"), code="out = 1", expect=1)
    printed = step_print(1, step, module, "PagedAttention.forward_decode")
    assert [{k: v.text for k, v in m.bindings.items()} for m in printed.matches] == [{"ARGS": "query, key_cache"}]


def test_a_captured_run_of_statements_prints_each_line() -> None:
    module = cst.parse_module(DECODE)
    step = Replace(pattern=Pattern.parse("$...HEAD\nreturn out"), code="pass", expect=1)
    (match,) = step_print(1, step, module, "PagedAttention.forward_decode").matches
    assert match.bindings["HEAD"].text == ("use_v1 = max_seq_len <= 8192\nif use_v1:\n"
                                           "    out = ops.paged_attention_v1(query, key_cache)\n"
                                           "else:\n    out = ops.paged_attention_v2(query, key_cache)")
    assert match.code.text == match.bindings["HEAD"].text + "\nreturn out"


# What manifests written by earlier runs recorded for an empty capture (`$...X`
# that took nothing): the sha256 of the ast dump of an empty module.
EMPTY_RUN = "3543b4693a36a1098850b8bc928887694ed59a6deb7d3dfd0339de01f55a77b6"


def test_an_empty_capture_keeps_the_hash_earlier_manifests_recorded() -> None:
    assert (fingerprint(()).sha256, fingerprint(()).text) == (EMPTY_RUN, "")


def test_positional_arguments_read_back_as_arguments_not_a_tuple() -> None:
    call = cst.parse_expression("ops.paged_attention_v1(output,\n    query)")
    assert isinstance(call, cst.Call)
    assert fingerprint(tuple(call.args)).text == "output, query"
    assert fingerprint(tuple(call.args)) != fingerprint(cst.parse_expression("(output, query)"))


def test_statements_this_python_cannot_read_still_print_apart() -> None:
    # A 3.12 `type` statement: libcst reads it, `ast` before 3.12 does not. Its
    # print is its own text, comments aside, not one print shared by all such code.
    first = cst.parse_module("import torch\n\n# the cache layout\ntype Shape = tuple[int, int]\n").body[1]
    second = cst.parse_module("type Shape = tuple[int, int, int]\n").body[0]
    assert fingerprint(first).text == "type Shape = tuple[int, int]"
    assert fingerprint(second).text == "type Shape = tuple[int, int, int]"
    assert fingerprint(first).sha256 != fingerprint(second).sha256
    block = cst.parse_module("if TYPE_CHECKING:\n    # shapes\n    type Shape = tuple[int, int]\n").body[0]
    expected = "if TYPE_CHECKING:\n    type Shape = tuple[int, int]" if sys.version_info >= (3, 12) else \
        "if TYPE_CHECKING: type Shape = tuple[int, int]"
    assert fingerprint(block).text == expected


def test_an_expression_this_python_cannot_read_prints_its_text() -> None:
    # An f-string reusing its quote inside {} (PEP 701) is read by libcst, and by `ast` only from 3.12.
    source = 'f"decode {stats["tokens"]}  tokens"'
    spaced = cst.parse_expression(source.replace("{stats", "{ stats"))
    printed = fingerprint(spaced)
    if sys.version_info >= (3, 12):
        assert printed.text == ast.unparse(ast.parse(source, mode="eval"))
    else:
        assert printed.text == 'f"decode { stats["tokens"]} tokens"'
    assert printed.sha256 != fingerprint(cst.parse_expression(source.replace("tokens\"]", "count\"]"))).sha256
