"""Tests generated from the examples each patch carries (Fixit style).

For every example: the patch gives exactly ``after`` (or fails with
``error``, or reports "already applied" and changes nothing); the same
holds with CRLF line endings; and the patch recognises its own result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset import Example, Patch, load_patch_set
from patcher.patchset.runner import Status, patch_source

PATCHES = Path(__file__).resolve().parent.parent / "patches"


def _examples() -> list[tuple[Patch, Example]]:
    patch_set = load_patch_set(PATCHES)
    return [(patch, example) for patch in patch_set.patches for example in patch.examples]


def _with_params(patch: Patch, example: Example) -> Patch:
    if not example.params:
        return patch
    overrides = [f"{patch.id}.{k}={v}" for k, v in example.params.items()]
    return next(p for p in load_patch_set(PATCHES, overrides=overrides).patches if p.id == patch.id)


CASES = _examples()
IDS = [f"{patch.id}: {example.name}" for patch, example in CASES]


def test_every_patch_has_an_applying_and_a_failing_example() -> None:
    for patch in load_patch_set(PATCHES).patches:
        kinds = {("after" if e.after else "error" if e.error else "unchanged") for e in patch.examples}
        assert {"after", "error"} <= kinds, patch.id


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize(("patch", "example"), CASES, ids=IDS)
def test_example(patch: Patch, example: Example, newline: str) -> None:
    patch = _with_params(patch, example)
    before = example.before.replace("\n", newline).encode()
    result = patch_source("example.py", before, [patch])
    outcome = result.outcomes[0]
    if example.error is not None:
        assert outcome.status is Status.FAILED
        assert example.error in outcome.detail
        assert result.patched == before
    elif example.after is not None:
        assert outcome.status is Status.APPLIED, outcome.detail
        assert result.patched == example.after.replace("\n", newline).encode()
    else:
        assert outcome.status is Status.ALREADY_APPLIED, outcome.detail
        assert result.patched == before


@pytest.mark.parametrize(("patch", "example"), [c for c in CASES if c[1].after], ids=[i for i, c in zip(IDS, CASES) if c[1].after])
def test_example_result_is_recognised_as_applied(patch: Patch, example: Example) -> None:
    patch = _with_params(patch, example)
    assert example.after is not None
    result = patch_source("example.py", example.after.encode(), [patch])
    assert result.outcomes[0].status is Status.ALREADY_APPLIED
    assert result.patched == example.after.encode()
