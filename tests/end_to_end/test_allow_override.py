"""``apply --allow RULE --reason "..."``: the run ships, says which finding it allowed and why, and records it.

The next run is not covered by that override, but ``check`` of apply's
output honours what was recorded.
"""

from __future__ import annotations

import json

from tests.fixtures_rules import reenable_triton
from tests.fixtures_vendor import SHIPPED


def test_allow_overrides_a_rule_for_one_run_and_the_manifest_records_it(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    reenable_triton(vendor_copy)
    source = make_zip(vendor_copy)
    reason = "lab card, Triton build under test (ticket 42)"
    # The rule's former id still works, and names the rule by its current id.
    result = cli("apply", source, "-o", "ctx", "--allow", "no-triton-prefill", "--reason", reason)
    assert result.exit_code == 0, result.stderr
    assert any(line.startswith(f"allowed: {SHIPPED}:") and "no-triton-kernels" in line and reason in line
               for line in result.stderr.splitlines()), result.stderr
    assert f"override --allow no-triton-kernels: {reason} (recorded in the manifest)" in result.stderr
    manifest = json.loads((cli.cwd / "ctx" / "patcher-manifest.json").read_text())
    assert manifest["allowed_rules"] == [{"rule": "no-triton-kernels", "reason": reason}]
    # The next run is not covered by this one's override...
    again = cli("apply", source, "-o", "ctx2")
    assert again.exit_code == 2 and not (cli.cwd / "ctx2").exists()
    # ...but check honours what apply recorded, and says so.
    checked = cli("check", cli.cwd / "ctx")
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert any(line.startswith("allowed: ") and "recorded in patcher-manifest.json" in line
               for line in checked.stdout.splitlines()), checked.stdout
