"""Rule v1-length-limit on the decode shapes real versions took: which bound reaches V1, and the exact message.

Each ``forward_decode`` below is the vendor's (VENDOR.md): the PyTorch
decode above ``_PYTORCH_DECODE_THRESHOLD``, then a V1 call under some test.
The threshold is raised to 65536 throughout, so the rule passes only
when every V1 call that can run is bounded at 32768 tokens or less.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from patcher.checks.base import Valid
from patcher.checks.examples import run_example
from patcher.checks.v1_length_limit import V1LengthLimit

RULE = V1LengthLimit()
RAISED = ("_PYTORCH_DECODE_THRESHOLD = 65536 sends sequences of 32769 to 65536 tokens to the V1 kernel "
          "(directly or after V2 fails), past its 32768-token limit")


def _found(code: str, params: Mapping[str, Any] | None = None) -> list[tuple[int, str]]:
    found = run_example(RULE, Valid(code, params=dict(params or {})))
    assert all(v.path == "example.py" and v.severity.value == "error" for v in found)
    return [(v.line, v.message) for v in found]


def _decode(v1: str, threshold: str = "65536") -> str:
    """The vendor's forward_decode with the threshold and the V1 block given."""
    return f"""\
class PagedAttention:
    # V1 fails past 32K on BI-V100: long contexts decode in PyTorch.
    _PYTORCH_DECODE_THRESHOLD = {threshold}

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len, num_seqs):
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
        output = torch.empty_like(query)
{v1}        return output
"""


V1 = "ops.paged_attention_v1(output, query, key_cache, value_cache)"
V2 = "PagedAttention._paged_attention_v2_pytorch(output, query)"


@pytest.mark.parametrize("v1", [
    # The bound in the if, in its else, either way round, negated, through a flag, nested, with `and`.
    f"        if actual_max < 16384:\n            {V1}\n        else:\n            {V2}\n",
    f"        if max_seq_len > 8192:\n            {V2}\n        else:\n            {V1}\n",
    f"        if max_seq_len >= 32769:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 8192 < max_seq_len:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 32768 <= max_seq_len:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 32769 <= max_seq_len:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 32768 >= num_tokens:\n            {V1}\n",
    f"        if 32769 > context_len:\n            {V1}\n",
    f"        if actual_max <= 32768:\n            {V1}\n",
    f"        if actual_max < 32769:\n            {V1}\n",
    f"        if not (max_seq_len > 8192):\n            {V1}\n",
    f"        if not (max_seq_len <= 8192):\n            {V2}\n        else:\n            {V1}\n",
    f"        if int(actual_max) <= 8192:\n            {V1}\n",
    f"        if seq_lens.max() <= 8192:\n            {V1}\n",
    f"        if max_seq_len <= 8192:\n            {V1}\n        elif max_seq_len <= 16384:\n            {V1}\n",
    f"        if max_seq_len <= 40000:\n            if num_seqs > 1:\n                if actual_max <= 8192:\n"
    f"                    {V1}\n",
    f"        if max_seq_len <= 30000 and actual_max <= 8192:\n            {V1}\n",
    f"        if num_seqs > 4 and max_seq_len <= 8192:\n            {V1}\n",
    f"        use_v2 = max_seq_len > 8192\n        if not use_v2:\n            {V1}\n",
    f"        use_v1 = (max_seq_len <= 8192 and (num_seqs == 1 or num_seqs > 512))\n"
    f"        if use_v1:\n            {V1}\n        else:\n            {V2}\n",
    f"        if max_seq_len <= 8192:\n            {V1}\n        if False:\n            {V1}\n",
], ids=lambda v1: " ".join(v1.split())[:60])
def test_v1_bounded_at_the_limit_or_less_lets_the_threshold_be_raised(v1: str) -> None:
    assert _found(_decode(v1)) == []


@pytest.mark.parametrize("v1", [
    # The vendor's own override, after the upstream heuristic: V1 at every length.
    f"        use_v1 = (max_seq_len <= 8192 and num_seqs > 4)\n        use_v1 = True\n"
    f"        if use_v1:\n            {V1}\n        else:\n            {V2}\n",
    f"        if actual_max < 40000:\n            {V1}\n",
    f"        if max_seq_len >= 32770:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 32770 <= max_seq_len:\n            {V2}\n        else:\n            {V1}\n",
    f"        if 32769 >= num_tokens:\n            {V1}\n",
    f"        if 40000 > context_len:\n            {V1}\n",
    f"        if actual_max <= 32769:\n            {V1}\n",
    f"        if actual_max < 32770:\n            {V1}\n",
    f"        if not (max_seq_len > 40000):\n            {V1}\n",
    # Tests that bound no length.
    f"        if num_seqs <= 8:\n            {V1}\n",
    f"        if int(num_seqs) <= 8192:\n            {V1}\n",
    f"        if max_seq_len == 8192:\n            {V1}\n",
    f"        if max_seq_len != 8192:\n            pass\n        else:\n            {V1}\n",
    f"        if max_seq_len <= 8192 or num_seqs > 2:\n            {V1}\n",
    f"        if 0 < max_seq_len <= 8192:\n            {V1}\n",
    f"        if max_seq_len <= 8192 and num_seqs > 4:\n            pass\n        else:\n            {V1}\n",
    f"        if num_seqs <= 30000 and query.numel():\n            {V1}\n",
    f"        if max_seq_len <= limit:\n            {V1}\n",
    f"        if {V1} and max_seq_len <= 8192:\n            pass\n",
    # One bounded call does not vouch for another.
    f"        if max_seq_len <= 8192:\n            {V1}\n        {V1}\n",
    f"        if max_seq_len <= 8192:\n            {V1}\n        elif max_seq_len <= 40000:\n            {V1}\n",
    # A V1 call that cannot run bounds nothing; no V1 call at all neither.
    f"        if False:\n            {V1}\n",
    f"        {V2}\n",
], ids=lambda v1: " ".join(v1.split())[:60])
def test_v1_reached_past_the_limit_makes_the_raised_threshold_an_error(v1: str) -> None:
    assert _found(_decode(v1)) == [(3, RAISED)]


def test_the_threshold_written_as_an_expression_is_shown_with_its_value() -> None:
    code = _decode(f"        {V1}\n", threshold="64 * 1024")
    assert _found(code) == [(3, "_PYTORCH_DECODE_THRESHOLD = 64 * 1024 = 65536 sends sequences of 32769 to 65536 "
                                "tokens to the V1 kernel (directly or after V2 fails), past its 32768-token limit")]


@pytest.mark.parametrize("threshold", ["32768", "32 * 1024", "1 << 15", "8192"])
def test_a_threshold_at_the_limit_or_below_passes(threshold: str) -> None:
    assert _found(_decode(f"        {V1}\n", threshold=threshold)) == []


def test_a_threshold_one_past_the_limit_is_reported() -> None:
    assert _found(_decode(f"        {V1}\n", threshold="32769")) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 32769 sends sequences of 32769 to 32769 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]


def test_a_threshold_read_from_the_environment_cannot_be_checked() -> None:
    code = _decode(f"        {V1}\n", threshold="int(os.environ.get('PA_DECODE_THRESHOLD', 32768))")
    assert _found(code) == [(3, "_PYTORCH_DECODE_THRESHOLD = int(os.environ.get('PA_DECODE_THRESHOLD', 32768)) is "
                                "not a constant, so whether decode sends sequences longer than 32768 tokens to V1 "
                                "cannot be checked")]


def test_the_limit_and_the_attribute_come_from_the_policy() -> None:
    code = _decode(f"        {V1}\n").replace("_PYTORCH_DECODE_THRESHOLD", "_DECODE_LIMIT")
    params = {"max-tokens": 16384, "threshold-attribute": "_DECODE_LIMIT"}
    assert _found(code, params) == [
        (3, "_DECODE_LIMIT = 65536 sends sequences of 16385 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 16384-token limit")]
    assert _found(code, {"max-tokens": 65536, "threshold-attribute": "_DECODE_LIMIT"}) == []
    bounded = _decode(f"        if max_seq_len <= 16384:\n            {V1}\n").replace("_PYTORCH_DECODE_THRESHOLD",
                                                                                      "_DECODE_LIMIT")
    assert _found(bounded, params) == []
    assert _found(_decode(f"        if max_seq_len <= 16385:\n            {V1}\n"), {"max-tokens": 16384}) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 65536 sends sequences of 16385 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 16384-token limit")]


LITERAL = """\
class PagedAttention:
    @staticmethod
    def forward_decode(query, seq_lens, max_seq_len):
        actual_max = int(seq_lens.max().item())
        if actual_max > {test}:
            return PagedAttention._forward_decode_pytorch(query, seq_lens)
        ops.paged_attention_v1(output, query)
"""


def test_a_literal_threshold_in_forward_decode_is_reported_at_its_line_with_the_test() -> None:
    assert _found(LITERAL.format(test="40000")) == [
        (5, "actual_max > 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]
    assert _found(LITERAL.format(test="1 << 16")) == [
        (5, "actual_max > 1 << 16 sends sequences of 32769 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]
    assert _found(LITERAL.format(test="32768")) == []


def test_a_literal_threshold_beside_a_raised_attribute_gives_two_findings() -> None:
    code = LITERAL.format(test="40000").replace("class PagedAttention:\n",
                                                "class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 65536\n")
    assert _found(code) == [
        (2, RAISED),
        (6, "actual_max > 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]


def test_a_literal_threshold_whose_fallback_cannot_run_is_left_to_keep_pytorch_fallbacks() -> None:
    code = LITERAL.format(test="40000").replace(
        "            return PagedAttention._forward_decode_pytorch(query, seq_lens)\n",
        "            if False:\n                return PagedAttention._forward_decode_pytorch(query, seq_lens)\n")
    assert _found(code) == []


def test_any_integer_literal_a_fallback_runs_above_is_a_threshold_and_a_name_is_not() -> None:
    code = ("class PagedAttention:\n"
            "    @staticmethod\n"
            "    def forward_decode(query, seq_lens):\n"
            "        if query.numel() > 100000:\n"
            "            return PagedAttention._forward_decode_pytorch(query, seq_lens)\n"
            "        return PagedAttention._forward_decode_pytorch(query, seq_lens)\n")
    assert _found(code) == [(4, "query.numel() > 100000 sends sequences of 32769 to 100000 tokens to the V1 kernel "
                                "(directly or after V2 fails), past its 32768-token limit")]
    assert _found(code.replace("query.numel() > 100000", "query.numel() > limit")) == []


def test_every_paged_attention_class_of_the_file_is_checked() -> None:
    code = ("if HAVE_IXFORMER:\n"
            "    class PagedAttention:\n"
            "        _PYTORCH_DECODE_THRESHOLD = 32768\n"
            "else:\n"
            "    class PagedAttention:\n"
            "        _PYTORCH_DECODE_THRESHOLD = 131072\n"
            "class PagedAttentionMetadata:\n"
            "    _PYTORCH_DECODE_THRESHOLD = 131072\n")
    assert _found(code) == [(6, "_PYTORCH_DECODE_THRESHOLD = 131072 sends sequences of 32769 to 131072 tokens to the "
                                "V1 kernel (directly or after V2 fails), past its 32768-token limit")]


def test_a_bounded_class_does_not_vouch_for_the_next_one() -> None:
    bounded = _decode(f"        if max_seq_len <= 8192:\n            {V1}\n")
    raised = bounded.replace(f"        if max_seq_len <= 8192:\n            {V1}\n", f"        {V1}\n")
    code = f"if HAVE_IXFORMER:\n{_indent(bounded)}else:\n{_indent(raised)}"
    assert _found(code) == [(18, RAISED)]


def _indent(code: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in code.splitlines(keepends=True))


def test_a_literal_threshold_after_one_on_the_attribute_is_still_read() -> None:
    code = """\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query, seq_lens)
        if seq_lens.numel() > 50000:  # many sequences: PyTorch too
            return PagedAttention._forward_decode_pytorch(query, seq_lens)
        ops.paged_attention_v1(output, query)
"""
    assert _found(code) == [(9, "seq_lens.numel() > 50000 sends sequences of 32769 to 50000 tokens to the V1 kernel "
                                "(directly or after V2 fails), past its 32768-token limit")]


def test_only_the_v1_calls_of_forward_decode_bound_it() -> None:
    # A warm-up helper calls V1 at a fixed small size, outside any length test: it is not decode.
    code = _decode(f"        if max_seq_len <= 8192:\n            {V1}\n") + f"""
    @staticmethod
    def _warm_up(output, query, key_cache, value_cache):
        {V1}
"""
    assert _found(code) == []
    # And a bounded V1 call outside forward_decode does not vouch for forward_decode's own.
    unbounded = _decode(f"        {V1}\n") + f"""
    @staticmethod
    def _decode_short(output, query, key_cache, value_cache, max_seq_len):
        if max_seq_len <= 8192:
            {V1}
"""
    assert _found(unbounded) == [(3, RAISED)]


def test_without_forward_decode_nothing_bounds_v1() -> None:
    code = f"""\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 65536


def decode_short(output, query, key_cache, value_cache, max_seq_len):
    if max_seq_len <= 8192:
        {V1}
    else:
        PagedAttention._forward_decode_pytorch(output, query)
"""
    assert _found(code) == [(2, RAISED)]


def test_an_annotated_threshold_without_a_value_has_nothing_to_check() -> None:
    assert _found("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD: int\n") == []
    assert _found("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD: int = 40000\n") == [
        (2, "_PYTORCH_DECODE_THRESHOLD = 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]
