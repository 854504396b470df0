"""upgrade on a context whose manifest does not record a patch of the series compares that patch as found.

The manifest stands in only for the patches apply ran: a patch added to
the series since (here, one more insert in forward_prefix) has no record
on the context, so its status there is what its patterns find, while the
recorded patches keep their recorded status.
"""

from __future__ import annotations

import json

from tests.fixtures_cli import SERIES, TARGET, patch_of
from tests.fixtures_patches import add_patch, copy_patch_set, insert_step, patch_toml
from tests.fixtures_vendor import VENDOR_ZIP

CODE = "prefill_checked = True"


def test_a_patch_the_manifest_does_not_record_is_compared_as_found(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    applied = cli("apply", VENDOR_ZIP, "-o", tmp_path / "out")  # the bundled series, recorded in its manifest
    assert applied.exit_code == 0, applied.stderr
    patches = add_patch(copy_patch_set(tmp_path / "set"), "mark-prefill", patch_toml(
        "mark-prefill", insert_step("before", "return PagedAttention._forward_prefix_pytorch($...ARGS)", CODE),
        scope="PagedAttention.forward_prefix", target=TARGET, header=f"applied-when = [{json.dumps(CODE)}]",
        description="Mark the prefill path", last_update="2026-12-01"))
    result = cli("upgrade", tmp_path / "out", VENDOR_ZIP, "--patches", patches, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert [p["id"] for p in report["patches"]] == [*SERIES, "mark-prefill"]
    assert (patch_of(report, "mark-prefill")["old"], patch_of(report, "mark-prefill")["new"]) == ("applies", "applies")
    assert all((patch_of(report, i)["old"], patch_of(report, i)["new"]) == ("applies", "applies") for i in SERIES)
