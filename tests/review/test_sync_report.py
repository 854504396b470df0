"""``patcher verify-sync`` says, one line per mirror group, whether each stale copy is in sync.

In sync means byte-identical to the copy the image ships; a copy that differs in line endings
only says so; --diff shows how to bring it in line; JSON gives the same as fields.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fixtures_cli import INSTALLED
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE


# The fixture's line counts, read from it rather than written down twice.
N = len((VENDOR_TREE / SHIPPED).read_bytes().splitlines())


ROOT_N = len((VENDOR_TREE / "paged_attn.py").read_bytes().splitlines())


SHIPS = f"the image ships {SHIPPED} -> {INSTALLED}"


def test_the_demo_zip_has_drifted(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", vendor_zip)
    assert result.exit_code == 1
    assert result.stdout == f"paged_attn.py ({ROOT_N} lines) != {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr.startswith("1 of 1 mirror group drifted: ")


def test_diff_shows_how_to_bring_the_stale_copy_in_line(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", "--diff", vendor_zip)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[1:4] == [f"diff --git a/paged_attn.py b/{SHIPPED}", "--- a/paged_attn.py", f"+++ b/{SHIPPED}"]
    assert lines[4] == f"@@ -1,{ROOT_N} +1,{N} @@"
    assert b"\r\n" in result.stdout_bytes  # the stale copy's CRLF lines, byte for byte


def test_a_tree_in_sync_exits_0(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    result = cli("verify-sync", vendor_copy.parent)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"paged_attn.py == {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr == "the mirror group is in sync\n"


def test_line_endings_only_are_reported_as_such(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shipped = (vendor_copy / SHIPPED).read_bytes()
    assert b"\r\n" not in shipped
    (vendor_copy / "paged_attn.py").write_bytes(shipped.replace(b"\n", b"\r\n"))
    result = cli("verify-sync", "--diff", vendor_copy)
    assert result.exit_code == 1
    assert result.stdout == (f"paged_attn.py ({N} lines, CRLF) != {SHIPPED} ({N} lines, LF) in line endings only; "
                             f"{SHIPS}\n")  # and no whole-file diff that only moves CRs


def test_json_gives_each_group_and_copy_as_fields(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", "--format", "json", "--diff", vendor_zip)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["in_sync"] is False
    (group,) = data["groups"]
    assert (group["shipped"], group["image_paths"], group["origin"]) == (SHIPPED, [INSTALLED], "patch set")
    (copy,) = group["copies"]
    assert (copy["path"], copy["lines"], copy["line_endings"], copy["state"]) == ("paged_attn.py", ROOT_N, "CRLF", "drifted")
    assert copy["diff"].startswith(f"diff --git a/paged_attn.py b/{SHIPPED}\n")


def test_a_git_checkout_of_the_tree_is_read_without_its_git_folder(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    git = pytest.importorskip("git")
    checkout = vendor_copy.parent
    repo = git.Repo.init(checkout)
    repo.index.add([str(p.relative_to(checkout)) for p in checkout.rglob("*") if p.is_file() and ".git" not in p.parts])
    repo.index.commit("vendor drop", author=git.Actor("t", "t@localhost"), committer=git.Actor("t", "t@localhost"))
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    result = cli("verify-sync", checkout)
    # Exit 0 alone is also what "no mirror group found" gives: check the group was read.
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"paged_attn.py == {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr == "the mirror group is in sync\n"
