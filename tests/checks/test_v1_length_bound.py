"""Rule v1-length-limit, what bounds V1: a raised decode threshold passes only when every V1 call that can run sits under a
test bounding the length at the limit (32768 tokens) or less.

Each ``forward_decode`` is the vendor's (VENDOR.md): the PyTorch decode
above ``_PYTORCH_DECODE_THRESHOLD`` (raised to 65536 here), then a V1
call under some test. Only forward_decode's own V1 calls count, class by
class.
"""

from __future__ import annotations

import pytest

from patcher.checks.v1_length_limit import V1LengthLimit

from tests.fixtures_rules import RAISED, V1_CALL, V2_SUBSTITUTE, errors_in, vendor_decode

RULE = V1LengthLimit()


@pytest.mark.parametrize("v1", [
    # The bound in the if, in its else, either way round, negated, through a flag, nested, with `and`.
    f"        if actual_max < 16384:\n            {V1_CALL}\n        else:\n            {V2_SUBSTITUTE}\n",
    f"        if max_seq_len > 8192:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if max_seq_len >= 32769:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 8192 < max_seq_len:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 32768 <= max_seq_len:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 32769 <= max_seq_len:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 32768 >= num_tokens:\n            {V1_CALL}\n",
    f"        if 32769 > context_len:\n            {V1_CALL}\n",
    f"        if actual_max <= 32768:\n            {V1_CALL}\n",
    f"        if actual_max < 32769:\n            {V1_CALL}\n",
    f"        if not (max_seq_len > 8192):\n            {V1_CALL}\n",
    f"        if not (max_seq_len <= 8192):\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if int(actual_max) <= 8192:\n            {V1_CALL}\n",
    f"        if seq_lens.max() <= 8192:\n            {V1_CALL}\n",
    f"        if max_seq_len <= 8192:\n            {V1_CALL}\n        elif max_seq_len <= 16384:\n            {V1_CALL}\n",
    f"        if max_seq_len <= 40000:\n            if num_seqs > 1:\n                if actual_max <= 8192:\n"
    f"                    {V1_CALL}\n",
    f"        if max_seq_len <= 30000 and actual_max <= 8192:\n            {V1_CALL}\n",
    f"        if num_seqs > 4 and max_seq_len <= 8192:\n            {V1_CALL}\n",
    f"        use_v2 = max_seq_len > 8192\n        if not use_v2:\n            {V1_CALL}\n",
    f"        use_v1 = (max_seq_len <= 8192 and (num_seqs == 1 or num_seqs > 512))\n"
    f"        if use_v1:\n            {V1_CALL}\n        else:\n            {V2_SUBSTITUTE}\n",
    f"        if max_seq_len <= 8192:\n            {V1_CALL}\n        if False:\n            {V1_CALL}\n",
], ids=lambda v1: " ".join(v1.split())[:60])
def test_v1_bounded_at_the_limit_or_less_lets_the_threshold_be_raised(v1: str) -> None:
    assert errors_in(RULE, vendor_decode(v1)) == []


@pytest.mark.parametrize("v1", [
    # The vendor's own override, after the upstream heuristic: V1 at every length.
    f"        use_v1 = (max_seq_len <= 8192 and num_seqs > 4)\n        use_v1 = True\n"
    f"        if use_v1:\n            {V1_CALL}\n        else:\n            {V2_SUBSTITUTE}\n",
    f"        if actual_max < 40000:\n            {V1_CALL}\n",
    f"        if max_seq_len >= 32770:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 32770 <= max_seq_len:\n            {V2_SUBSTITUTE}\n        else:\n            {V1_CALL}\n",
    f"        if 32769 >= num_tokens:\n            {V1_CALL}\n",
    f"        if 40000 > context_len:\n            {V1_CALL}\n",
    f"        if actual_max <= 32769:\n            {V1_CALL}\n",
    f"        if actual_max < 32770:\n            {V1_CALL}\n",
    f"        if not (max_seq_len > 40000):\n            {V1_CALL}\n",
    # Tests that bound no length.
    f"        if num_seqs <= 8:\n            {V1_CALL}\n",
    f"        if int(num_seqs) <= 8192:\n            {V1_CALL}\n",
    f"        if max_seq_len == 8192:\n            {V1_CALL}\n",
    f"        if max_seq_len != 8192:\n            pass\n        else:\n            {V1_CALL}\n",
    f"        if max_seq_len <= 8192 or num_seqs > 2:\n            {V1_CALL}\n",
    f"        if 0 < max_seq_len <= 8192:\n            {V1_CALL}\n",
    f"        if max_seq_len <= 8192 and num_seqs > 4:\n            pass\n        else:\n            {V1_CALL}\n",
    f"        if num_seqs <= 30000 and query.numel():\n            {V1_CALL}\n",
    f"        if max_seq_len <= limit:\n            {V1_CALL}\n",
    f"        if {V1_CALL} and max_seq_len <= 8192:\n            pass\n",
    # One bounded call does not vouch for another.
    f"        if max_seq_len <= 8192:\n            {V1_CALL}\n        {V1_CALL}\n",
    f"        if max_seq_len <= 8192:\n            {V1_CALL}\n        elif max_seq_len <= 40000:\n            {V1_CALL}\n",
    # A V1 call that cannot run bounds nothing; no V1 call at all neither.
    f"        if False:\n            {V1_CALL}\n",
    f"        {V2_SUBSTITUTE}\n",
], ids=lambda v1: " ".join(v1.split())[:60])
def test_v1_reached_past_the_limit_makes_the_raised_threshold_an_error(v1: str) -> None:
    assert errors_in(RULE, vendor_decode(v1)) == [(3, RAISED)]


def test_only_the_v1_calls_of_forward_decode_bound_it() -> None:
    # A warm-up helper calls V1 at a fixed small size, outside any length test: it is not decode.
    code = vendor_decode(f"        if max_seq_len <= 8192:\n            {V1_CALL}\n") + f"""
    @staticmethod
    def _warm_up(output, query, key_cache, value_cache):
        {V1_CALL}
"""
    assert errors_in(RULE, code) == []
    # And a bounded V1 call outside forward_decode does not vouch for forward_decode's own.
    unbounded = vendor_decode(f"        {V1_CALL}\n") + f"""
    @staticmethod
    def _decode_short(output, query, key_cache, value_cache, max_seq_len):
        if max_seq_len <= 8192:
            {V1_CALL}
"""
    assert errors_in(RULE, unbounded) == [(3, RAISED)]


def test_without_forward_decode_nothing_bounds_v1() -> None:
    code = f"""\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 65536


def decode_short(output, query, key_cache, value_cache, max_seq_len):
    if max_seq_len <= 8192:
        {V1_CALL}
    else:
        PagedAttention._forward_decode_pytorch(output, query)
"""
    assert errors_in(RULE, code) == [(2, RAISED)]


def test_a_bounded_class_does_not_vouch_for_the_next_one() -> None:
    bounded = vendor_decode(f"        if max_seq_len <= 8192:\n            {V1_CALL}\n")
    raised = bounded.replace(f"        if max_seq_len <= 8192:\n            {V1_CALL}\n", f"        {V1_CALL}\n")
    code = f"if HAVE_IXFORMER:\n{_indent(bounded)}else:\n{_indent(raised)}"
    assert errors_in(RULE, code) == [(18, RAISED)]


def _indent(code: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in code.splitlines(keepends=True))
