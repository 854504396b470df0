"""A safety-rule error NEW has and OLD had not (the Triton prefill re-enabled) is listed as new."""

from __future__ import annotations

from tests.fixtures_cli import SERIES, assert_unchanged, patch_of, upgrade
from tests.fixtures_vendor import SHIPPED


def test_triton_reenabled_in_new_is_a_new_rule_error(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "triton-reenabled")
    assert code == 1
    new_errors = report["rules"]["new_errors"]
    triton = [e for e in new_errors if e["rule"] == "no-triton-kernels"]
    assert triton and all(e["path"] == SHIPPED for e in triton)
    assert any("context_attention_fwd" in e["message"] for e in triton)
    assert report["rules"]["fixed"] == []
    # The patches themselves do not care: forward_prefix is none of their scopes.
    for patch_id in SERIES:
        assert_unchanged(patch_of(report, patch_id))
