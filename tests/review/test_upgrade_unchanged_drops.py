"""``patcher upgrade OLD NEW`` exits 0 when every patch behaves on NEW as on OLD.

A drop reformatted inside the patched scopes (comments, line breaks, CRLF), or the same drop as
a zip and as a folder. The pairs come from fixtures/make_upgrade_pairs.py: the demo tree (OLD)
and the same tree with one change a new vendor drop might bring (NEW).
"""

from __future__ import annotations

from make_upgrade_pairs import make_tree
from tests.fixtures_cli import INSTALLED, SERIES, TARGET, assert_nothing_around, assert_unchanged, install_line, patch_of, scopes_of, upgrade
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP


def test_an_unchanged_drop_exits_0_with_every_patch_the_same(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "unchanged")
    assert code == 0
    assert report["needs_review"] is False
    for patch_id in SERIES:
        assert_unchanged(patch_of(report, patch_id))
    assert list(scopes_of(patch_of(report, "three-tier-decode"))) == ["PagedAttention.forward_decode", "PagedAttention"]
    assert list(scopes_of(patch_of(report, "prefix-pregather"))) == ["PagedAttention._forward_prefix_pytorch"]
    assert_nothing_around(report)
    shipping = report["shipping"][TARGET]
    assert shipping["old_installed"] == shipping["new_installed"] == [f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:{install_line()})"]


def test_comments_line_breaks_and_crlf_inside_patched_scopes_are_no_change(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "reformatted")
    old = (tmp_path / "pair" / "old" / SHIPPED).read_bytes()
    new = (tmp_path / "pair" / "new" / SHIPPED).read_bytes()
    # The pair really differs where the patches look: line endings flipped, the V1 call on one line, comments.
    assert (b"\r\n" in old) != (b"\r\n" in new)
    assert b"# the same call, on one line" in new and b"# context tiles" in new
    assert old.replace(b"\r\n", b"\n") != new.replace(b"\r\n", b"\n")
    assert code == 0, report
    assert report["needs_review"] is False
    for patch_id in SERIES:
        assert_unchanged(patch_of(report, patch_id))
    assert_nothing_around(report)


def test_zip_against_folder_of_the_same_drop_is_no_change(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    new = make_tree(tmp_path / "tree", "reformatted")
    result = cli("upgrade", VENDOR_ZIP, new)
    assert result.exit_code == 0, result.stdout + result.stderr
    first, *_, last = result.stdout.splitlines()
    assert first == (f"patcher upgrade {VENDOR_ZIP} -> {new}: exit 0: every patch applies on NEW as on OLD, "
                     "the patched NEW passes the safety rules, and the shipped copies are where they were")
    assert last == f"next: patcher apply {new}"
