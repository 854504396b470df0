"""``patcher check --format json``: the verdict, the counts, the files checked, and every violation (notes among them,
with ``"severity": "note"``) with its rule's reason."""

from __future__ import annotations

import json

from tests.fixtures_vendor import SHIPPED


def test_json_lists_every_violation_with_its_severity_and_reason(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", vendor_zip, "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["errors"] == 0 and report["warnings"] == 1
    assert SHIPPED in report["checked"] and "paged_attn.py" not in report["checked"]
    rules = {v["rule"]: v for v in report["violations"]}
    assert rules["v2-needs-fallback"]["severity"] == "note"
    assert rules["v2-needs-fallback"]["path"] == SHIPPED
    assert "cannot run: `use_v1` is always True here" in rules["v2-needs-fallback"]["message"]
    assert "NotImplementedError" in rules["v2-needs-fallback"]["reason"]
    assert rules["install-fails-loudly"]["severity"] == "warning"
