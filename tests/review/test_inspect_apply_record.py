"""``patcher inspect`` on a context ``apply`` wrote: the manifest is apply's record, not a vendor file that never ships."""

from __future__ import annotations

import json

import pytest

from patcher.manifest_file import MANIFEST


@pytest.mark.parametrize("suffix", [".tar.gz", ".zip", ""])
def test_manifest_is_listed_as_applys_record_not_as_never_shipped(cli, vendor_zip, suffix) -> None:  # type: ignore[no-untyped-def]
    context = cli.cwd / f"context{suffix}"
    assert cli("apply", vendor_zip, "-o", context).exit_code == 0
    text = cli("inspect", context)
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    never = lines[next(i for i, line in enumerate(lines) if line.startswith("Never shipped")):]
    assert f"  {MANIFEST}" not in never
    assert lines[-1] == f"Apply's record (not a vendor file, not shipped): {MANIFEST}"
    data = json.loads(cli("inspect", "--format", "json", context).stdout)
    assert MANIFEST not in data["never_shipped"] and data["record"] == MANIFEST


def test_a_vendor_drop_has_no_record(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", vendor_zip)
    assert "Apply's record" not in result.stdout
    assert json.loads(cli("inspect", "--format", "json", vendor_zip).stdout)["record"] is None
