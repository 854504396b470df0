"""``--stat`` summarises the diff; with ``--exit-code`` a non-empty diff exits 1.

A tree apply already wrote has an empty diff.
"""

from __future__ import annotations

from tests.fixtures_cli import applied_folder
from tests.fixtures_vendor import SHIPPED


def test_stat_summarises_and_exit_code_flags_a_diff(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--stat", "--exit-code", vendor_zip)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f" {SHIPPED} |") and lines[1].startswith(" paged_attn.py ")
    assert lines[-1].startswith(" 2 files changed, ") and lines[-1].endswith("deletions(-)")
    assert "diff --git" not in result.stdout


def test_a_tree_apply_already_wrote_has_an_empty_diff(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    patched = applied_folder(cli, vendor_zip, "patched")
    result = cli("diff", "--exit-code", patched)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no changes\n")
    assert cli("diff", "--exit-code", "--format", "json", patched).exit_code == 0
