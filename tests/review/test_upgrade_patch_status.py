"""upgrade says how each patch fares on NEW: applies, already applied, or fails, and why."""

from __future__ import annotations

import json

from make_upgrade_pairs import make_pair
from tests.fixtures_cli import SERIES, assert_unchanged, patch_of, scopes_of, upgrade
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP


def test_a_patch_the_vendor_already_applied_is_reported_as_already_applied(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "already-applied")
    assert code == 1
    patch = patch_of(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "already-applied")
    assert patch["diagnostic"] == "" and patch["captures_changed"] is False
    assert scopes_of(patch)["PagedAttention.forward_decode"]["changed"] is True
    diff = scopes_of(patch)["PagedAttention.forward_decode"]["diff"].splitlines()
    assert any(line.startswith("+") and "use_v2 = actual_max > 8192" in line for line in diff)
    for patch_id in SERIES[1:]:
        assert_unchanged(patch_of(report, patch_id))
    # The vendor's V2 call now sits behind a fallback: the rule error it had is gone.
    assert [e["rule"] for e in report["rules"]["fixed"]] in ([], ["v2-needs-fallback"])
    assert report["rules"]["new_errors"] == []


def test_a_build_context_written_by_apply_is_an_input(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", VENDOR_ZIP, "-o", "ctx").exit_code == 0
    result = cli("upgrade", VENDOR_ZIP, cli.cwd / "ctx", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0
    assert [(p["old"], p["new"]) for p in report["patches"]] == [("applies", "applies")] * 3


def test_a_new_drop_that_does_not_parse_fails_every_patch_and_says_why(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    shipped = new / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"\ndef broken(:\n")
    result = cli("upgrade", old, new, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    for patch in report["patches"]:
        assert (patch["old"], patch["new"]) == ("applies", "fails")
        assert patch["diagnostic"].startswith(f"{SHIPPED} does not parse: ")
        assert all(s["changed"] and s["note"] == "NEW does not parse" for s in patch["scopes"])
