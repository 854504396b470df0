"""A patch's markers decide whether it runs: ``requires`` must hold, ``applied-when`` says it is there already.

A patch whose own result does not match its ``applied-when`` markers is a
bug in the patch: it fails and changes nothing, or it would apply again on
the next run.
"""

from __future__ import annotations

from typing import Any

from patcher.patchset.runner import Status, patch_source

from tests.fixtures_patches import patch_toml, replace_step
from tests.patchset.conftest import SOURCE, run_one


def test_an_already_applied_patch_is_named_in_its_outcome(load_patch: Any) -> None:
    _, outcome = run_one(load_patch, patch_toml("edit", replace_step("y = 5", "y = 2"), header='applied-when = ["y = 2"]'))
    assert (outcome.patch.id, outcome.status, outcome.message) == ("edit", Status.ALREADY_APPLIED, "")


def test_a_requirement_that_is_there_lets_the_patch_apply(load_patch: Any) -> None:
    result, outcome = run_one(load_patch, patch_toml("edit", replace_step("y = 2", "y = 3"), header='requires = ["x = 1"]'))
    assert outcome.status is Status.APPLIED
    assert result.patched == SOURCE.replace(b"y = 2", b"y = 3")


def test_a_patch_whose_result_misses_its_own_markers_fails_and_changes_nothing(load_patch: Any) -> None:
    text = patch_toml("edit", replace_step("y = 2", "y = 3")).replace('scope = "f"', 'scope = "f"\napplied-when = ["y = 4"]')
    patch = load_patch(text)
    result = patch_source("x.py", SOURCE, [patch])
    (outcome,) = result.outcomes
    assert outcome.patch is patch and outcome.status is Status.FAILED
    assert outcome.message == "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
    assert result.patched == SOURCE


# A patch must recognise its own result, or it would apply again on the next run.
def test_a_result_that_fails_its_own_applied_when_is_a_bug_in_the_patch(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\n"
    patch = patch_toml("edit", replace_step("x += 1", "x += 2"), scope="", header='applied-when = ["x += 3"]')
    result, outcome = run_one(load_patch, patch, source.encode())
    assert outcome.status is Status.FAILED
    assert outcome.detail == "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
    assert result.patched == source.encode()
