"""A step must find its pattern exactly ``expect`` times (once by default), or it fails saying both counts and changes nothing."""

from __future__ import annotations

import pytest

from patcher.patchset.runner import Status

from tests.fixtures_patches import replace_step


# A pattern found more often than `expect` says is a failure, not a silent edit of each.
def test_two_matches_where_one_is_expected_fail_and_change_nothing(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\nprint(x)\nx += 1\n"
    patched, outcome = run_steps(replace_step("x += 1", "x += 2"), source)
    assert outcome.status is Status.FAILED
    # (At module scope the detail ends "in " with no scope name: runner.py, reported.)
    assert "step 1 (replace): expected 'x += 1' once, found it 2 times" in outcome.detail
    assert patched == source


def test_expect_two_replaces_both(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\nprint(x)\nx += 1\n"
    patched, outcome = run_steps(replace_step("x += 1", "x += 2", expect=2), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "x = 0\nx += 2\nprint(x)\nx += 2\n"


def test_one_match_where_two_are_expected_says_one_time(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def f(x):\n    x += 1\n    return x\n"
    patched, outcome = run_steps(replace_step("x += 1", "x += 2", expect=2), source, scope="f")
    assert outcome.status is Status.FAILED
    assert outcome.detail == "step 1 (replace): expected 'x += 1' 2 times, found it 1 time in f"
    assert patched == source


@pytest.mark.parametrize(("expect", "source", "message"), [
    ({"expect": 2}, "x += 1\n", "expected 'x += 1' 2 times, found it 1 time"),
    ({"expect": 3}, "x += 1\nx += 1\n", "expected 'x += 1' 3 times, found it 2 times"),
    ({}, "y = 0\n", "expected 'x += 1' once, found it 0 times"),
], ids=["expect-2-found-1", "expect-3-found-2", "once-found-0"])
def test_a_count_mismatch_says_both_counts(run_steps, expect: dict[str, int], source: str, message: str) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(replace_step("x += 1", "x += 2", **expect), source)
    assert outcome.status is Status.FAILED and message in outcome.detail
    assert patched == source
