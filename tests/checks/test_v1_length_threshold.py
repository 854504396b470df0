"""Rule v1-length-limit, the threshold: a decode threshold (the class attribute, or a literal a PyTorch fallback runs above)
past the limit sends sequences V1 cannot take to it; the message gives the range, the value of an expression, the line.

The limit and the attribute come from the policy; a threshold read from
the environment cannot be checked and says so.
"""

from __future__ import annotations

import pytest

from patcher.checks.v1_length_limit import V1LengthLimit

from tests.fixtures_rules import RAISED, V1_CALL, errors_in, vendor_decode

RULE = V1LengthLimit()


def test_the_threshold_written_as_an_expression_is_shown_with_its_value() -> None:
    code = vendor_decode(f"        {V1_CALL}\n", threshold="64 * 1024")
    assert errors_in(RULE, code) == [(3, "_PYTORCH_DECODE_THRESHOLD = 64 * 1024 = 65536 sends sequences of 32769 to 65536 "
                                "tokens to the V1 kernel (directly or after V2 fails), past its 32768-token limit")]


@pytest.mark.parametrize("threshold", ["32768", "32 * 1024", "1 << 15", "8192"])
def test_a_threshold_at_the_limit_or_below_passes(threshold: str) -> None:
    assert errors_in(RULE, vendor_decode(f"        {V1_CALL}\n", threshold=threshold)) == []


def test_a_threshold_one_past_the_limit_is_reported() -> None:
    assert errors_in(RULE, vendor_decode(f"        {V1_CALL}\n", threshold="32769")) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 32769 sends sequences of 32769 to 32769 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]


def test_a_threshold_read_from_the_environment_cannot_be_checked() -> None:
    code = vendor_decode(f"        {V1_CALL}\n", threshold="int(os.environ.get('PA_DECODE_THRESHOLD', 32768))")
    assert errors_in(RULE, code) == [(3, "_PYTORCH_DECODE_THRESHOLD = int(os.environ.get('PA_DECODE_THRESHOLD', 32768)) is "
                                "not a constant, so whether decode sends sequences longer than 32768 tokens to V1 "
                                "cannot be checked")]


def test_the_limit_and_the_attribute_come_from_the_policy() -> None:
    code = vendor_decode(f"        {V1_CALL}\n").replace("_PYTORCH_DECODE_THRESHOLD", "_DECODE_LIMIT")
    params = {"max-tokens": 16384, "threshold-attribute": "_DECODE_LIMIT"}
    assert errors_in(RULE, code, params) == [
        (3, "_DECODE_LIMIT = 65536 sends sequences of 16385 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 16384-token limit")]
    assert errors_in(RULE, code, {"max-tokens": 65536, "threshold-attribute": "_DECODE_LIMIT"}) == []
    bounded = vendor_decode(f"        if max_seq_len <= 16384:\n            {V1_CALL}\n").replace("_PYTORCH_DECODE_THRESHOLD",
                                                                                      "_DECODE_LIMIT")
    assert errors_in(RULE, bounded, params) == []
    assert errors_in(RULE, vendor_decode(f"        if max_seq_len <= 16385:\n            {V1_CALL}\n"), {"max-tokens": 16384}) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 65536 sends sequences of 16385 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 16384-token limit")]


def test_an_annotated_threshold_without_a_value_has_nothing_to_check() -> None:
    assert errors_in(RULE, "class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD: int\n") == []
    assert errors_in(RULE, "class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD: int = 40000\n") == [
        (2, "_PYTORCH_DECODE_THRESHOLD = 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]


def test_every_paged_attention_class_of_the_file_is_checked() -> None:
    code = ("if HAVE_IXFORMER:\n"
            "    class PagedAttention:\n"
            "        _PYTORCH_DECODE_THRESHOLD = 32768\n"
            "else:\n"
            "    class PagedAttention:\n"
            "        _PYTORCH_DECODE_THRESHOLD = 131072\n"
            "class PagedAttentionMetadata:\n"
            "    _PYTORCH_DECODE_THRESHOLD = 131072\n")
    assert errors_in(RULE, code) == [(6, "_PYTORCH_DECODE_THRESHOLD = 131072 sends sequences of 32769 to 131072 tokens to the "
                                "V1 kernel (directly or after V2 fails), past its 32768-token limit")]


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
    assert errors_in(RULE, LITERAL.format(test="40000")) == [
        (5, "actual_max > 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]
    assert errors_in(RULE, LITERAL.format(test="1 << 16")) == [
        (5, "actual_max > 1 << 16 sends sequences of 32769 to 65536 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]
    assert errors_in(RULE, LITERAL.format(test="32768")) == []


def test_a_literal_threshold_beside_a_raised_attribute_gives_two_findings() -> None:
    code = LITERAL.format(test="40000").replace("class PagedAttention:\n",
                                                "class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 65536\n")
    assert errors_in(RULE, code) == [
        (2, RAISED),
        (6, "actual_max > 40000 sends sequences of 32769 to 40000 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit")]


def test_a_literal_threshold_whose_fallback_cannot_run_is_left_to_keep_pytorch_fallbacks() -> None:
    code = LITERAL.format(test="40000").replace(
        "            return PagedAttention._forward_decode_pytorch(query, seq_lens)\n",
        "            if False:\n                return PagedAttention._forward_decode_pytorch(query, seq_lens)\n")
    assert errors_in(RULE, code) == []


def test_any_integer_literal_a_fallback_runs_above_is_a_threshold_and_a_name_is_not() -> None:
    code = ("class PagedAttention:\n"
            "    @staticmethod\n"
            "    def forward_decode(query, seq_lens):\n"
            "        if query.numel() > 100000:\n"
            "            return PagedAttention._forward_decode_pytorch(query, seq_lens)\n"
            "        return PagedAttention._forward_decode_pytorch(query, seq_lens)\n")
    assert errors_in(RULE, code) == [(4, "query.numel() > 100000 sends sequences of 32769 to 100000 tokens to the V1 kernel "
                                "(directly or after V2 fails), past its 32768-token limit")]
    assert errors_in(RULE, code.replace("query.numel() > 100000", "query.numel() > limit")) == []


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
    assert errors_in(RULE, code) == [(9, "seq_lens.numel() > 50000 sends sequences of 32769 to 50000 tokens to the V1 kernel "
                                "(directly or after V2 fails), past its 32768-token limit")]


_TWO_TIERS = """\
class PagedAttention:
    # V1 fails past 32K on BI-V100: long contexts leave it.
    _PYTORCH_DECODE_THRESHOLD = {threshold}

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len):
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            # Past 64K only the gather-free PyTorch path fits; between, the chunked V2 substitute.
            if actual_max > 65536:
                return PagedAttention._forward_decode_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
            return PagedAttention._paged_attention_v2_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
        output = torch.empty_like(query)
        ops.paged_attention_v1(output, query, key_cache, value_cache, block_tables, seq_lens, max_seq_len)
        return output
"""


def test_a_literal_tier_nested_under_the_threshold_attribute_is_not_the_threshold() -> None:
    # Sequences up to the attribute reach V1; the 65536 only splits the longer ones.
    assert errors_in(RULE, _TWO_TIERS.format(threshold=32768)) == []
    assert errors_in(RULE, _TWO_TIERS.format(threshold=49152)) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 49152 sends sequences of 32769 to 49152 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit"),
    ]
