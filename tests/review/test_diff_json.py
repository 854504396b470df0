"""``diff --format json`` lists the files, the patches behind each, the mirrors and the stat as fields."""

from __future__ import annotations

import json

from tests.fixtures_cli import SERIES
from tests.fixtures_vendor import SHIPPED


def test_json_lists_files_patches_and_stat(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("diff", "--format", "json", vendor_zip).stdout)
    files = data["sections"][0]["files"]
    assert [f["path"] for f in files] == [SHIPPED, "paged_attn.py"]
    assert [p["id"] for p in files[0]["patches"]] == list(SERIES)
    assert files[1]["mirror_of"] == SHIPPED
    assert data["stat"]["files"] == 2 and data["empty"] is False
    assert files[0]["diff"].startswith(f"diff --git a/{SHIPPED} b/{SHIPPED}\n")
