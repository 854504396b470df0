"""``diff --base REF`` reads the patch set's history: outside a git checkout it refuses in one line.

The line names the folder it looked in, so a user who gave the wrong
``--patches`` (a loose copy, an unpacked download) sees which one, and says
to use a git checkout of the patch set instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_patches import copy_patch_set, one_error_line

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def test_diff_base_outside_git_names_the_folder_it_looked_in(cli: Any, vendor_zip: Path, tmp_path: Path) -> None:
    loose = copy_patch_set(tmp_path / "loose")
    result = cli("diff", "--base", "HEAD", "--patches", loose, vendor_zip)
    assert one_error_line(result) == (
        f"error: {loose}: not in a git repository "
        "(--base reads the patch set's history: use a git checkout of it)")
