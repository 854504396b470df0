"""Compound statements in the closest code: kinds compared whole, bodies statement by statement, the block named.

An `if` meets an `if` before a `while`; statements of different compound
kinds differ as a whole; a one-line suite holds the same statements as its
indented form; where the run parts inside a compound statement, the report
says in which block (``in except handler 2, statement 1``).
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.transforms.closest import find_closest
from patcher.transforms.pattern import Pattern
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import closest_in, closest_summary


def test_a_compound_statement_of_the_same_kind_beats_a_shorter_one_of_another_kind() -> None:
    # The pattern's `if` meets a `while` one token away and an `if` four tokens away: the `if` is named.
    closest = closest_in('''\
        def forward_decode(seq_lens, max_seq_len):
            while seq_lens.numel() > 0:
                actual_max = int(seq_lens.max().item())
            if seq_lens.numel() > 0 and max_seq_len > 8192:
                actual_max = int(seq_lens.max().item())
            return actual_max
        ''', "if seq_lens.numel() > 0:\n    actual_max = int(seq_lens.max().item())\n", "forward_decode")
    assert closest_summary(closest) == (4, 5, 1, 0, "if seq_lens.numel() > 0: ...",
                                        "if seq_lens.numel() > 0 and max_seq_len > 8192: ...", "")


def test_statements_of_different_compound_kinds_differ_as_a_whole() -> None:
    # The V1 call now sits under a lock instead of a flag: the `if` and the
    # `with` differ as a whole, whatever their bodies hold.
    closest = closest_in('''\
        def forward_decode(output, query, key_cache):
            with _DECODE_LOCK:
                ops.paged_attention_v1(output, query, key_cache)
            return output
        ''', "if use_v1:\n    ops.paged_attention_v1(output, query)\n", "forward_decode")
    assert closest_summary(closest) == (2, 3, 1, 0, "if use_v1: ...", "with _DECODE_LOCK: ...", "")


def test_one_line_blocks_are_compared_statement_by_statement() -> None:
    # `else: out = ...` on one line holds the same statement as its indented form.
    closest = closest_in('''\
        def forward_decode(query, key_cache, use_v1):
            if use_v1: out = ops.paged_attention_v1(query, key_cache)
            else: out = ops.paged_attention_v2(query, key_cache)
            return out
        ''', "if use_v1:\n    out = ops.paged_attention_v1(query, key_cache)\nelse:\n"
                         "    out = ops.paged_attention_v2(query, key_cache, 512)\n", "forward_decode")
    assert closest_summary(closest) == (2, 3, 1, 0, "out = ops.paged_attention_v2(query, key_cache, 512)",
                                        "out = ops.paged_attention_v2(query, key_cache)", "in its else, statement 1")


def test_a_match_statement_is_compared_whole() -> None:
    # Python 3.10 syntax the image reads: a `match` has cases, not a body.
    closest = closest_in('''\
        def pick(kind):
            match kind:
                case "v1":
                    return 1
        ''', 'match kind:\n    case "v2":\n        return 2\n', "pick")
    assert closest_summary(closest) == (2, 4, 1, 0, "match kind: ...", "match kind: ...", "")


# Every kind of block a compound statement has, for the "inside" path.
BLOCKS = '''\
def handler(x, y):
    try:
        a = 1
    except ValueError:
        b = 2
    except KeyError:
        c = 3
    else:
        d = 4
    finally:
        e = 5
    if x:
        f = 1
    elif y:
        g = 2
    else:
        h = 3
    for i in x:
        j = i
    else:
        k = 0
    while y:
        y -= 1
    else:
        m = 1
    with open(x) as fh:
        n = fh.read()
        o = 2
    return n
'''


TRY = "try:\n    a = 1\nexcept ValueError:\n    b = 2\nexcept KeyError:\n    c = 3\nelse:\n    d = 4\nfinally:\n    e = 5"


IF = "if x:\n    f = 1\nelif y:\n    g = 2\nelse:\n    h = 3"


@pytest.mark.parametrize(("pattern", "lines", "inside", "wanted", "found"), [
    (TRY.replace("c = 3", "c = 30"), (2, 11), "in except handler 2, statement 1", "c = 30", "c = 3"),
    (TRY.replace("d = 4", "d = 40"), (2, 11), "in its else, statement 1", "d = 40", "d = 4"),
    (TRY.replace("e = 5", "e = 50"), (2, 11), "in its finally, statement 1", "e = 50", "e = 5"),
    (IF.replace("h = 3", "h = 30"), (12, 17), "in its elif, statement 1, in its else, statement 1", "h = 30", "h = 3"),
    (IF.replace("g = 2", "g = 20"), (12, 17), "in its elif, statement 1, in its body, statement 1", "g = 20", "g = 2"),
    ("for i in x:\n    j = i\nelse:\n    k = 1", (18, 21), "in its else, statement 1", "k = 1", "k = 0"),
    ("while y:\n    y -= 1\nelse:\n    m = 2", (22, 25), "in its else, statement 1", "m = 2", "m = 1"),
    # The code's block goes on past the pattern's, or ends before it.
    ("with open(x) as fh:\n    n = fh.read()", (26, 28), "in its body, statement 2", "", "o = 2"),
    ("with open(x) as fh:\n    n = fh.read()\n    o = 2\n    p = 3", (26, 28), "in its body, statement 3", "p = 3", ""),
    # One handler fewer: the statements differ as a whole.
    (TRY.replace("except KeyError:\n    c = 3\n", ""), (2, 11), "", "try: ...", "try: ..."),
])
def test_the_closest_code_says_in_which_block_it_parts(pattern: str, lines: tuple[int, int], inside: str,
                                                       wanted: str, found: str) -> None:
    module = cst.parse_module(BLOCKS)
    closest = find_closest(Pattern.parse(pattern), module, find_scope(module, "handler"))
    assert closest is not None
    assert ((closest.first_line, closest.last_line), closest.inside, closest.pattern, closest.code) == (
        lines, inside, wanted, found)
    assert (closest.statement, closest.matched) == (1, 0)


def test_a_trailing_sequence_takes_the_rest_of_a_block() -> None:
    # `$...BODY` ends the while's body: its statements are not what differs, the else is.
    module = cst.parse_module(BLOCKS)
    pattern = Pattern.parse("for i in x:\n    j = i\nelse:\n    k = 0\nwhile $C:\n    $...BODY\nelse:\n    m = 3")
    closest = find_closest(pattern, module, find_scope(module, "handler"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (18, 25, 2, 1)
    assert (closest.inside, closest.pattern, closest.code) == ("in its else, statement 1", "m = 3", "m = 1")


def test_a_leading_sequence_takes_the_run_up_to_the_statement_that_differs_least() -> None:
    module = cst.parse_module(BLOCKS)
    closest = find_closest(Pattern.parse("$...HEAD\nreturn m"), module, find_scope(module, "handler"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (2, 29, 2, 1)
    assert (closest.pattern, closest.code, closest.differing_tokens) == ("return m", "return n", 1)
