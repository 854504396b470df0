"""``linediff``: difflib's own opcodes for small inputs, a correct and tight diff for large ones, in near-linear time.

Small inputs (both sides multiplying to at most ``SMALL`` lines) get exactly
``SequenceMatcher(None, a, b, autojunk=False)``'s answer. Larger ones lose
their common ends, are cut at the lines unique on both sides (the longest
run in order), and a piece where every line repeats is diffed window by
window. Whatever the path, the answer is an edit script: it covers both
sides in order, its equal runs are equal, its neighbours differ in kind.
"""

from __future__ import annotations

import difflib
import random
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patcher import linediff
from patcher.linediff import BOUNDED, SMALL, WINDOW, grouped, opcodes


def difflib_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def assert_edit_script(a: list[str], b: list[str], codes: list[tuple[str, int, int, int, int]]) -> None:
    """Assert CODES turn A into B: contiguous, equal runs equal, each tag the right kind, no two alike side by side."""
    i = j = 0
    rebuilt: list[str] = []
    for number, (tag, i1, i2, j1, j2) in enumerate(codes):
        assert (i1, j1) == (i, j), codes
        assert i1 <= i2 and j1 <= j2 and (i1, j1) != (i2, j2), codes
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2], (tag, i1, i2, j1, j2)
        else:
            assert tag == ("insert" if i1 == i2 else "delete" if j1 == j2 else "replace"), codes
        if number:
            assert (tag == "equal") != (codes[number - 1][0] == "equal"), codes
        rebuilt += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b)) and rebuilt == b


def equal_lines(codes: list[tuple[str, int, int, int, int]]) -> int:
    return sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag == "equal")


def longest_common_subsequence(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for n, y in enumerate(b):
            current.append(previous[n] + 1 if x == y else max(previous[n + 1], current[n]))
        previous = current
    return previous[-1]


def vendor_like(lines: int, seed: int = 0) -> list[str]:
    """LINES of code as a large vendor file has them: blank lines, ')', 'else:' and 'return out' all over it."""
    rng = random.Random(seed)
    common = ["", "        )", "        else:", "        return out", "    ", "            pass"]
    out = []
    for n in range(lines):
        out.append(rng.choice(common) if rng.random() < 0.5 else f"        value_{n} = compute(value_{n - 1}, {n})")
    return out


lines_of = st.lists(st.sampled_from(["a", "b", "c", "", ")"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(lines_of, lines_of)
def test_small_inputs_get_exactly_difflibs_opcodes(a: list[str], b: list[str]) -> None:
    assert opcodes(a, b) == difflib_opcodes(a, b)


def test_at_the_size_limit_difflib_still_answers_and_just_above_it_the_unique_line_is_kept() -> None:
    # One unique line that moved past a run of repeated ones: difflib keeps the run,
    # the cut at unique lines keeps the unique line. Exactly SMALL lines multiplied: difflib's answer.
    k = 199
    a, b = ["unique"] + ["repeated"] * k, ["repeated"] * k + ["unique"]
    assert len(a) * len(b) == SMALL
    assert opcodes(a, b) == difflib_opcodes(a, b) == [
        ("delete", 0, 1, 0, 0), ("equal", 1, 200, 0, 199), ("insert", 200, 200, 199, 200)]
    k = 200
    a, b = ["unique"] + ["repeated"] * k, ["repeated"] * k + ["unique"]
    assert opcodes(a, b) == [("insert", 0, 0, 0, 200), ("equal", 0, 1, 200, 201), ("delete", 1, 201, 201, 201)]


def test_a_unique_line_that_opens_the_new_side_is_kept_as_well_as_one_that_opens_the_old() -> None:
    # The mirror of the case above: the unique line moved to the first line of b.
    k = 200
    a, b = ["repeated"] * k + ["unique"], ["unique"] + ["repeated"] * k
    assert opcodes(a, b) == [("delete", 0, 200, 0, 0), ("equal", 200, 201, 0, 1), ("insert", 201, 201, 1, 201)]


def test_a_large_file_with_lines_added_at_its_end_is_one_equal_run_and_one_insert() -> None:
    a = vendor_like(400, seed=3)
    b = a + ["        value_extra = compute(value_399, 400)", "", "        return out"]
    assert opcodes(a, b) == [("equal", 0, 400, 0, 400), ("insert", 400, 400, 400, 403)]
    assert opcodes(b, a) == [("equal", 0, 400, 0, 400), ("delete", 400, 403, 400, 400)]


def test_one_changed_line_in_a_large_file_is_one_replace_between_two_equal_runs() -> None:
    a = vendor_like(3000)
    b = list(a)
    b[1700] = "        value_1700 = compute_fast(value_1699, 1700)"
    a[1700] = "        value_1700 = compute(value_1699, 1700)"
    assert opcodes(a, b) == [("equal", 0, 1700, 0, 1700), ("replace", 1700, 1701, 1700, 1701),
                             ("equal", 1701, 3000, 1701, 3000)]


def test_edits_far_apart_in_a_large_file_are_each_their_own_change() -> None:
    a = vendor_like(3000, seed=1)
    b = a[:400] + ["        assert value_400 is not None"] + a[400:2500] + a[2503:]
    b[1200] = b[1200] + "  # checked"
    codes = opcodes(a, b)
    assert_edit_script(a, b, codes)
    assert [c for c in codes if c[0] != "equal"] == [
        ("insert", 400, 400, 400, 401), ("replace", 1199, 1200, 1200, 1201), ("delete", 2500, 2503, 2501, 2501)]


def test_an_inserted_block_of_repeated_lines_in_a_large_file_is_one_insert() -> None:
    a = vendor_like(2000, seed=2)
    b = a[:900] + ["", "        )", "", "        else:", ""] + a[900:]
    codes = opcodes(a, b)
    assert_edit_script(a, b, codes)
    assert equal_lines(codes) == len(a)
    assert [c[0] for c in codes] == ["equal", "insert", "equal"]


def test_large_inputs_of_unique_lines_keep_a_longest_common_subsequence() -> None:
    # Every line unique on both sides: the cut at unique lines is exact, so no
    # equal line is lost, whatever was deleted, inserted or moved.
    rng = random.Random(7)
    for round_ in range(6):
        a = [f"line {round_}.{n}" for n in range(260)]
        b = [line for line in a if rng.random() > 0.1]
        for _ in range(3):  # move a block
            start = rng.randrange(len(b) - 20)
            block = b[start:start + rng.randrange(1, 20)]
            del b[start:start + len(block)]
            at = rng.randrange(len(b))
            b[at:at] = block
        for _ in range(10):
            b.insert(rng.randrange(len(b)), f"new {round_}.{rng.random()}")
        codes = opcodes(a, b)
        assert_edit_script(a, b, codes)
        assert equal_lines(codes) == longest_common_subsequence(a, b)


def test_anchors_are_lines_unique_on_both_sides_not_only_on_one() -> None:
    # 'twice' occurs once in a but twice in b: it is no anchor, and the piece
    # after the head goes to difflib, which keeps the first copy in its place.
    head = [f"head {n}" for n in range(300)]
    filler = [f"filler {n}" for n in range(5)]
    a = ["start a"] + head + ["twice", "end a"]
    b = ["start b"] + head + ["twice"] + filler + ["twice", "end b"]
    codes = opcodes(a, b)
    assert_edit_script(a, b, codes)
    assert codes == [("replace", 0, 1, 0, 1), ("equal", 1, 302, 1, 302), ("replace", 302, 303, 302, 309)]


def test_a_large_piece_where_every_line_repeats_stays_aligned_window_by_window() -> None:
    # Both sides alternate two lines, shifted by one: no line is unique, the
    # ends differ, and the piece is far above BOUNDED.
    a, b = ["x", "y"] * 400, ["y", "x"] * 400
    assert len(a) * len(b) > BOUNDED
    codes = opcodes(a, b)
    assert_edit_script(a, b, codes)
    assert codes == [("insert", 0, 0, 0, 1), ("equal", 0, 799, 1, 800), ("delete", 799, 800, 800, 800)]


def test_windows_with_no_line_in_common_are_replaced_whole_and_the_rest_still_diffed() -> None:
    # Repeated lines only; the first 3 windows' worth of each side share no line.
    a = ["a1", "a2"] * (3 * WINDOW // 2) + ["s", "t"] * 300
    b = ["b1", "b2"] * (3 * WINDOW // 2) + ["s", "t"] * 300
    a, b = a + ["a end"] * 2, b + ["b end"] * 2
    codes = opcodes(a, b)
    assert_edit_script(a, b, codes)
    assert codes[0] == ("replace", 0, 3 * WINDOW, 0, 3 * WINDOW)
    assert equal_lines(codes) == 600


def test_no_difflib_call_on_a_long_pathological_file_sees_more_than_bounded_line_pairs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 3000 repeated lines on each side, shifted by one: window by window, each
    # window WINDOW lines of each side, so the cost stays linear; a window that
    # took the whole rest of one side would make it quadratic again.
    a, b = ["x", "y"] * 1500 + ["a end"] * 2, ["y", "x"] * 1500 + ["b end"] * 2
    seen: list[tuple[int, int]] = []

    class Recording(difflib.SequenceMatcher):
        def set_seqs(self, a: Any, b: Any) -> None:
            seen.append((len(a), len(b)))
            super().set_seqs(a, b)

    monkeypatch.setattr(linediff, "difflib", SimpleNamespace(SequenceMatcher=Recording))
    codes = opcodes(a, b)
    assert codes == [("insert", 0, 0, 0, 1), ("equal", 0, 2999, 1, 3000), ("replace", 2999, 3002, 3000, 3002)]
    assert len(seen) > len(a) // WINDOW // 2  # windowed, not one call
    assert max(x * y for x, y in seen) <= BOUNDED, seen
    assert max(max(sizes) for sizes in seen[:-1]) <= WINDOW, seen  # all but the last, the rest within BOUNDED


def test_a_pathological_piece_just_above_bounded_is_still_diffed_by_difflib_whole() -> None:
    # 501 x 500 repeated lines: windows; 500 x 500: one difflib call, whose answer is kept as it is.
    a, b = ["x", "y"] * 250, ["y", "x"] * 250
    a, b = ["p", "p"] + a + ["q", "q"], ["r", "r"] + b + ["s", "s"]
    a, b = a[:500], b[:500]
    assert len(a) * len(b) == BOUNDED
    assert opcodes(a, b) == difflib_opcodes(a, b)


@settings(max_examples=300, deadline=None)
@given(lines_of, lines_of, st.integers(min_value=0, max_value=5))
def test_hunks_are_grouped_as_difflib_groups_them(a: list[str], b: list[str], context: int) -> None:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    assert list(grouped(matcher.get_opcodes(), context)) == list(matcher.get_grouped_opcodes(context))
    assert list(grouped(matcher.get_opcodes())) == list(matcher.get_grouped_opcodes())


def test_hunks_of_a_large_file_are_the_changes_with_three_lines_around_each() -> None:
    a = vendor_like(3000, seed=3)
    b = list(a)
    b[100] += "  # one"
    b[2000] += "  # two"
    hunks = list(grouped(opcodes(a, b)))
    assert hunks == [
        [("equal", 97, 100, 97, 100), ("replace", 100, 101, 100, 101), ("equal", 101, 104, 101, 104)],
        [("equal", 1997, 2000, 1997, 2000), ("replace", 2000, 2001, 2000, 2001), ("equal", 2001, 2004, 2001, 2004)],
    ]
