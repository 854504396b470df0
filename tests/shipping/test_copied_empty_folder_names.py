"""``cp -r`` brings a folder's empty subfolders along under their own names (GNU coreutils 9.1), whatever
letter those names start with: a later copy into one of them lands there."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("folder", ["Xe", "XX", "e"])
def test_an_empty_subfolder_copied_with_cp_r_keeps_its_name(folder: str) -> None:
    plan = run_script(f"mkdir -p src/{folder}\ncp -r src /dest/c\ncp x.py /dest/c/{folder}/\n")
    assert in_dest(plan) == [f"/dest/c/{folder}/x.py"]
    assert not plan.notes
