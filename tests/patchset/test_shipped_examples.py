"""The shipped patch set passes its own examples and every safety rule's, run by the code ``patcher test`` runs.

Each case comes from ``patcher.authoring.cases``: every patch example in LF
and CRLF (exactly ``after``, or the ``error``, or "already applied" and
unchanged), the patch recognising its own result and changing nothing when
applied twice, and each safety rule's VALID / INVALID examples. One
implementation: what ``patcher test`` reports is what this suite asserts.
"""

from __future__ import annotations

import pytest

from patcher.authoring.cases import Case, Check, collect_cases, run_case
from patcher.checks import load_policy
from patcher.patchset import load_patch_set

from tests.fixtures_vendor import PATCHES

PATCH_SET = load_patch_set(PATCHES)
CASES = collect_cases(PATCH_SET)


def test_every_patch_has_an_applying_and_a_failing_example() -> None:
    for patch in PATCH_SET.patches:
        kinds = {("after" if e.after else "error" if e.error else "unchanged") for e in patch.examples}
        assert {"after", "error"} <= kinds, patch.id


def test_the_cases_cover_every_example_both_ways_and_every_rule() -> None:
    examples = sum(len(p.examples) for p in PATCH_SET.patches)
    round_trips = sum(1 for p in PATCH_SET.patches for e in p.examples if e.after is not None)
    checks = [c.check for c in CASES]
    assert checks.count(Check.EXAMPLE) == 2 * examples
    assert checks.count(Check.RECOGNISED) == checks.count(Check.TWICE) == 2 * round_trips
    declared = load_policy(PATCHES / "policy.toml").rules
    assert declared and {c.subject for c in CASES if c.rule} == {f"rule {r}" for r in declared}


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_each_case_patcher_test_runs_passes(case: Case) -> None:
    result = run_case(case)
    assert result.passed, f"{result.message}\n{result.diff}"
