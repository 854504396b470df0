"""Which decode thresholds verify-numerics crosses: the lengths forward_decode compares with, and the class threshold, lowered on both copies.

The literals are read from ``forward_decode`` only, and only where a
length (``actual_max``, ``max_seq_len``, ``len(...)``) is ordered against an
integer of at least a block; the class threshold is lowered to just above
the highest literal when both copies share it, and kept, with a note,
when they do not.
"""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from patcher.numerics.compare import (  # noqa: E402
    BI_V100, THRESHOLD_GAP, _literal_thresholds, _lower_thresholds, _Pair, _thresholds)

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402


def decode_source(body: str, *, prelude: str = "") -> bytes:
    """A paged_attn.py whose forward_decode holds BODY (indented for it)."""
    return (textwrap.dedent(prelude) + "class PagedAttention:\n    @staticmethod\n"
            "    def forward_decode(query, seq_lens, max_seq_len, num_seqs, num_heads, max_num_partitions):\n"
            + textwrap.indent(textwrap.dedent(body), " " * 8)).encode()


def test_the_vendor_and_patched_copies_compare_lengths_with_8192() -> None:
    # The vendor's heuristic (max_seq_len <= 8192, with num_seqs * num_heads > 512 beside it) and the
    # patched three tiers (actual_max > 8192) name the same length.
    assert _literal_thresholds(VENDOR_SOURCE) == [8192]
    assert _literal_thresholds(PATCHED.read_bytes()) == [8192]


def test_only_lengths_ordered_against_integers_of_a_block_or_more_count() -> None:
    source = decode_source("""
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > 8192:
            pass
        if 16384 >= max_seq_len:
            pass
        if 0 < actual_max <= 65536:
            pass
        if len(seq_lens) > 15 or len(seq_lens) >= 16:
            pass
        if num_seqs * num_heads > 512:
            pass
        if max_num_partitions == 1 or max_seq_len == 4096 or max_seq_len != 2048:
            pass
        if max_seq_len < 1000 == max_num_partitions:
            pass
        if max_seq_len > True or max_seq_len > 3000.0 or max_seq_len > -100000:
            pass
        if 20000 < 30000:
            pass
        if seq_lens.max() < 24576:
            pass
    """, prelude="""
        def forward_decode(max_seq_len):
            return max_seq_len > 40000
    """)
    # A module-level forward_decode counts too (an upstream-style copy may hold its own helper of that name).
    assert _literal_thresholds(source) == [40000, 8192, 16384, 65536, 24576, 16]


def test_literals_outside_forward_decode_do_not_count() -> None:
    source = decode_source("return max_seq_len > 8192\n", prelude="""
        def forward_prefix(max_seq_len):
            return max_seq_len > 12288


        class Other:
            def warm_up(self, max_seq_len):
                return max_seq_len >= 20480
    """)
    assert _literal_thresholds(source) == [8192]


def test_an_async_forward_decode_and_a_nested_comparison_count() -> None:
    source = b"""class PagedAttention:
    @staticmethod
    async def forward_decode(seq_lens, max_seq_len):
        def longest():
            return [n for n in seq_lens if n > 4096]
        return 0 if max_seq_len <= 2048 else longest()
"""
    assert _literal_thresholds(source) == [2048]  # `n` names no length: 4096 is not one


# -- the class threshold ----------------------------------------------------------------------------


def with_threshold(source: bytes, value: str) -> bytes:
    """SOURCE with the class's _PYTORCH_DECODE_THRESHOLD set to VALUE (a Python expression)."""
    old = b"    _PYTORCH_DECODE_THRESHOLD = 32768\n"
    assert source.count(old) == 1
    return source.replace(old, f"    _PYTORCH_DECODE_THRESHOLD = {value}\n".encode())


def pair(vendor: bytes, patched: bytes) -> _Pair:
    return _Pair(vendor, patched, BI_V100, v1_limit=32768)


def test_a_shared_class_threshold_is_lowered_on_both_copies_just_above_the_literals() -> None:
    both = pair(VENDOR_SOURCE, PATCHED.read_bytes())
    notes: list[str] = []
    assert _lower_thresholds(both, [2048, 8192], False, notes) == 8192 + THRESHOLD_GAP == 9216
    assert (both.threshold(0), both.threshold(1)) == (9216, 9216)
    assert [side.cls._PYTORCH_DECODE_THRESHOLD for side in both.sides] == [9216, 9216]
    assert notes == ["PagedAttention._PYTORCH_DECODE_THRESHOLD lowered from 32768 to 9216 on both copies to keep "
                     "CPU time low (--full-thresholds keeps it); every tier boundary is still crossed"]
    assert _thresholds(both, [2048, 8192]) == [(2048, "a literal in forward_decode"),
                                                (8192, "a literal in forward_decode"),
                                                (9216, "PagedAttention._PYTORCH_DECODE_THRESHOLD")]


def test_without_literals_the_threshold_drops_to_the_gap() -> None:
    both = pair(VENDOR_SOURCE, VENDOR_SOURCE)
    notes: list[str] = []
    assert _lower_thresholds(both, [], False, notes) == THRESHOLD_GAP == 1024
    assert both.threshold(1) == 1024 and len(notes) == 1


def test_full_thresholds_keeps_the_class_threshold_and_says_nothing() -> None:
    both = pair(VENDOR_SOURCE, PATCHED.read_bytes())
    notes: list[str] = []
    assert _lower_thresholds(both, [8192], True, notes) is None
    assert (both.threshold(0), both.threshold(1)) == (32768, 32768) and notes == []
    assert _thresholds(both, [8192]) == [(8192, "a literal in forward_decode"),
                                         (32768, "PagedAttention._PYTORCH_DECODE_THRESHOLD")]


@pytest.mark.parametrize(("value", "lowered"), [("9216", None), ("9217", 9216), ("9000", None)])
def test_a_threshold_already_at_or_below_the_lowered_value_is_kept(value: str, lowered: int | None) -> None:
    source = with_threshold(VENDOR_SOURCE, value)
    both = pair(source, source)
    notes: list[str] = []
    assert _lower_thresholds(both, [8192], False, notes) == lowered
    assert both.threshold(0) == both.threshold(1) == (lowered or int(value))
    assert len(notes) == (lowered is not None)


def test_different_class_thresholds_are_both_kept_with_a_note() -> None:
    both = pair(VENDOR_SOURCE, with_threshold(PATCHED.read_bytes(), "65536"))
    notes: list[str] = []
    assert _lower_thresholds(both, [8192], False, notes) is None
    assert (both.threshold(0), both.threshold(1)) == (32768, 65536)
    assert notes == ["PagedAttention._PYTORCH_DECODE_THRESHOLD differs (vendor 32768, patched 65536): both kept, "
                     "so the lengths between them compare two tiers"]
    # Even with --full-thresholds, the difference is worth a note.
    again: list[str] = []
    assert _lower_thresholds(both, [8192], True, again) is None and again == notes
    assert _thresholds(both, [8192]) == [(8192, "a literal in forward_decode"),
                                         (32768, "PagedAttention._PYTORCH_DECODE_THRESHOLD"),
                                         (65536, "PagedAttention._PYTORCH_DECODE_THRESHOLD")]


def test_a_copy_without_an_integer_class_threshold_has_none() -> None:
    without = VENDOR_SOURCE.replace(b"    _PYTORCH_DECODE_THRESHOLD = 32768\n", b"")
    assert without != VENDOR_SOURCE
    for source in (without, with_threshold(VENDOR_SOURCE, "32768.0"), with_threshold(VENDOR_SOURCE, "'32768'")):
        alone = pair(source, source)
        assert alone.threshold(0) is None and alone.threshold(1) is None
        notes: list[str] = []
        assert _lower_thresholds(alone, [8192], False, notes) is None and notes == []
        assert _thresholds(alone, [8192]) == [(8192, "a literal in forward_decode")]
    one = pair(VENDOR_SOURCE, without)
    notes = []
    assert _lower_thresholds(one, [8192], False, notes) is None
    assert notes == ["PagedAttention._PYTORCH_DECODE_THRESHOLD differs (vendor 32768, patched None): both kept, "
                     "so the lengths between them compare two tiers"]
    assert _thresholds(one, [8192]) == [(8192, "a literal in forward_decode"),
                                        (32768, "PagedAttention._PYTORCH_DECODE_THRESHOLD")]


def test_a_class_threshold_equal_to_a_literal_is_named_as_the_class_threshold() -> None:
    source = with_threshold(VENDOR_SOURCE, "8192")
    same = pair(source, source)
    assert _thresholds(same, [4096, 8192]) == [(4096, "a literal in forward_decode"),
                                               (8192, "PagedAttention._PYTORCH_DECODE_THRESHOLD")]


def test_a_tier_boundary_moved_by_a_parameter_is_crossed_on_both_sides(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    # The patched copy's V2 tier starts past 4096 tokens; the vendor's heuristic still names 8192: both are crossed.
    result = cli("verify-numerics", vendor_zip, "--set", "three-tier-decode.small_max=4096", "--cases")
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert ("decode thresholds crossed at T and T+1 tokens: 4096 (a literal in forward_decode), 8192 (a literal in "
            "forward_decode), 9216 (PagedAttention._PYTORCH_DECODE_THRESHOLD)") in lines
    tiers: dict[tuple[str, str], str] = {}
    ops = tier = ""
    for line in lines:
        if line.startswith("forward_decode, "):
            ops = line.split(", ")[1].split(":")[0]
        elif line.startswith("  ") and not line.startswith("    "):
            tier = line.split("  ")[1].strip()
        elif "head_dim=128" in line and "threshold 4096" in line:
            tiers[ops.split()[0], line.split("lengths [5, ")[1].split("]")[0]] = tier
    assert tiers == {("BI-V100", "4096"): "V1 -> V1", ("BI-V100", "4097"): "V1 -> V2 failed, V1",
                     ("ops", "4096"): "V1 -> V1", ("ops", "4097"): "V1 -> V2"}
    assert lines[-1] == "result: OK: prefill bitwise equal in all 61 case(s); decode within fp32 round-off in all 103"
