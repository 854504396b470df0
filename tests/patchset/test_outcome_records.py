"""A patch's outcome: its message, what each step matched, and the record the cache stores it as, read back unchanged."""

from __future__ import annotations

import json
from typing import Any

from patcher.patchset.runner import PatchOutcome, Status, patch_source

from tests.fixtures_patches import patch_toml, replace_step
from tests.patchset.conftest import SOURCE, run_one


def test_a_failure_without_a_diagnostic_is_its_detail_alone() -> None:
    outcome = PatchOutcome(None, Status.FAILED, "the result does not match")  # type: ignore[arg-type]
    assert outcome.message == "the result does not match"


def test_an_applied_patch_prints_what_each_step_matched(load_patch: Any) -> None:
    steps = replace_step("x = 1", "x = 4") + replace_step("y = 2", "y = 3")
    _, outcome = run_one(load_patch, patch_toml("edit", steps))
    assert outcome.status is Status.APPLIED
    assert [(p.step, len(p.matches)) for p in outcome.prints] == [(1, 1), (2, 1)]
    assert outcome.prints[0].matches[0] != outcome.prints[1].matches[0]  # each its own code


def test_outcomes_read_back_from_their_records_unchanged(load_patch: Any) -> None:
    applied = load_patch(patch_toml("applied", replace_step("y = 2", "y = 3")))
    failed = load_patch(patch_toml("failed", replace_step("z = 2", "z = 3")))
    result = patch_source("x.py", SOURCE, [applied, failed])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.FAILED]
    assert result.outcomes[0].prints and result.outcomes[1].diagnostic is not None
    for outcome in result.outcomes:
        record = json.loads(json.dumps(outcome.to_record()))
        assert record[:3] == [outcome.patch.id, outcome.status.value, outcome.detail]
        assert PatchOutcome.from_record(outcome.patch, record) == outcome
