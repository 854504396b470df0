"""Every command finds the patch set as git finds ``.git``: ``--patches``, else the nearest ``patches/`` above, else the bundled one.

A team runs ``patcher`` from anywhere in its checkout; the patch set it
reviews is the one of that checkout, whichever command it runs. A
``patches/series`` that is there but not a plain file is refused by name
(exit 2), never passed over for the set installed with the tool: that
would apply patches nobody in the pull request wrote.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from patcher.resources import default_patches_dir, nearest_patches_dir
from tests.fixtures_patches import copy_patch_set, one_error_line
from tests.fixtures_vendor import PATCHES, VENDOR_ZIP


def team_checkout(folder: Path) -> Path:
    """Lay out a checkout whose series holds only three-tier-decode; return a folder deep inside it."""
    patches = copy_patch_set(folder)
    series = patches / "series"
    kept = [line for line in series.read_text(encoding="utf-8").splitlines() if "three-tier-decode" in line]
    assert len(kept) == 1
    series.write_text(kept[0] + "\n", encoding="utf-8")
    deep = folder / "src" / "engine"
    deep.mkdir(parents=True)
    return deep


def manifest_series(context: Path) -> list[str]:
    with tarfile.open(context) as tar:
        member = tar.extractfile("patcher-manifest.json")
        assert member is not None
        return list(json.loads(member.read())["patch_set"]["series"])


def test_apply_deep_in_a_checkout_uses_that_checkouts_patch_set(cli: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    deep = team_checkout(tmp_path / "team")
    monkeypatch.chdir(deep)
    result = cli("apply", VENDOR_ZIP, "-o", tmp_path / "ctx.tar.gz")
    assert result.exit_code == 0, result.output
    assert manifest_series(tmp_path / "ctx.tar.gz") == ["three-tier-decode"]


def test_outside_any_checkout_the_bundled_set_is_used(tmp_path: Path) -> None:
    assert nearest_patches_dir(tmp_path) is None, "this machine has a patches/series above the test's folder"
    assert default_patches_dir(tmp_path).resolve() == PATCHES.resolve()


def test_inside_a_patch_set_that_set_is_nearer_than_a_patches_folder_it_holds(tmp_path: Path) -> None:
    # A patch set that keeps a set of examples of its own in patches/patches/.
    outer = tmp_path / "team" / "patches"
    inner = outer / "patches"
    inner.mkdir(parents=True)
    (outer / "series").write_text("three-tier-decode\n")
    (inner / "series").write_text("example\n")
    assert nearest_patches_dir(outer) == outer
    assert nearest_patches_dir(inner) == inner
    assert nearest_patches_dir(tmp_path / "team") == outer


@pytest.mark.parametrize("command", ["apply", "inspect", "verify-sync", "diff"])
def test_a_series_that_is_a_fifo_is_refused_by_name_not_passed_over(cli: Any, tmp_path: Path, command: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = tmp_path / "team"
    (checkout / "patches").mkdir(parents=True)
    os.mkfifo(checkout / "patches" / "series")  # nothing ever writes to it: reading it would hang
    monkeypatch.chdir(checkout)
    args = (command, VENDOR_ZIP, "-o", tmp_path / "ctx.tar.gz") if command == "apply" else (command, VENDOR_ZIP)
    result = cli(*args)
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert "series" in line and "not a regular file" in line
    assert not (tmp_path / "ctx.tar.gz").exists()
