"""max_gather_tokens as a parameter: each value's result is recognised as applied, another value's is not, a negative one is refused."""

from __future__ import annotations

import pytest

from patcher.patchset.runner import Status, patch_source

from tests.fixtures_vendor import SHIPPED
from tests.numerics.conftest import patched_with, patches_with


@pytest.mark.parametrize("value", [None, 0, 100, 2048])
def test_the_result_is_recognised_as_already_applied_for_every_value(value) -> None:  # type: ignore[no-untyped-def]
    patched = patched_with(value)
    again = patch_source(SHIPPED, patched, patches_with(value))
    assert [o.status for o in again.outcomes] == [Status.ALREADY_APPLIED] * 3
    assert again.patched == patched


def test_a_file_patched_with_another_value_is_not_taken_for_already_applied() -> None:
    again = patch_source(SHIPPED, patched_with(None), patches_with(0))
    outcome = next(o for o in again.outcomes if o.patch.id == "prefix-pregather")
    assert outcome.status is Status.FAILED
    assert "the file already has this patch with other parameters" in outcome.detail
    assert again.patched == patched_with(None)


def test_a_negative_value_is_refused(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", cli.cwd / "out", "--set", "prefix-pregather.max_gather_tokens=-1")
    assert result.exit_code == 2
    assert "-1 is below the minimum 0" in result.stderr
    assert not (cli.cwd / "out").exists()
