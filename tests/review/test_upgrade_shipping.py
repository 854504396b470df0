"""upgrade says when the shipped copy of a target moved: another file ships, or lands elsewhere."""

from __future__ import annotations

import pytest

from make_upgrade_pairs import make_pair
from tests.fixtures_cli import INSTALLED, SERIES, TARGET, assert_unchanged, install_line, patch_of, rule_differences, upgrade
from tests.fixtures_vendor import SHIPPED


def test_a_shipped_copy_that_is_another_file_moved(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "ships-another-file")
    assert code == 1
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (
        SHIPPED, "qwen3_6_scripts/paged_attn_bi100.py", True)
    assert shipping["new_installed"] == [f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:{install_line()})"]
    # The root stale copy no longer shares the shipped copy's name: the group went.
    assert report["mirrors"] == {"appeared": [], "went": [{"shipped": SHIPPED, "mirrors": ["paged_attn.py"]}]}
    # Same code under a new name: no rule finding is new or gone.
    assert rule_differences(report) == {"new_errors": [], "fixed": [], "new_warnings": [], "gone_warnings": []}
    for patch_id in SERIES:
        assert_unchanged(patch_of(report, patch_id))


def test_a_shipped_copy_installed_elsewhere_moved(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "installs-elsewhere")
    assert code == 1
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (SHIPPED, SHIPPED, True)
    assert shipping["new_installed"] == [
        f"/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py (qwen3_6_scripts/patch_ops.sh:{install_line()})"]
    assert report["mirrors"] == {"appeared": [], "went": []}
    for patch_id in SERIES:
        assert_unchanged(patch_of(report, patch_id))


@pytest.mark.parametrize("variant, line", [
    ("installs-elsewhere", f"shipped copy of {TARGET} ({SHIPPED}) is installed elsewhere: {{old}} -> "
                           "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py ({script})"),
    ("ships-another-file", f"shipped copy of {TARGET} moved: {SHIPPED} -> qwen3_6_scripts/paged_attn_bi100.py; "
                           "installed as {old} -> {old}"),
])
def test_the_text_names_where_a_moved_copy_is_installed(cli, tmp_path, variant: str, line: str) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", variant)
    result = cli("upgrade", old, new)
    assert result.exit_code == 1, result.stderr
    script = f"qwen3_6_scripts/patch_ops.sh:{install_line()}"
    assert line.format(old=f"{INSTALLED} ({script})", script=script) in result.stdout.splitlines()
