"""``cp -r`` brings a folder's empty subfolders, empty files and links along under their own names (GNU coreutils
9.1), whatever letter those names start with: a later copy into one of them lands there."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("folder", ["Xe", "XX", "e"])
def test_an_empty_subfolder_copied_with_cp_r_keeps_its_name(folder: str) -> None:
    plan = run_script(f"mkdir -p src/{folder}\ncp -r src /dest/c\ncp x.py /dest/c/{folder}/\n")
    assert in_dest(plan) == [f"/dest/c/{folder}/x.py"]
    assert not plan.notes


@pytest.mark.parametrize("name", ["Xe", "XX", "e"])
def test_a_touched_file_and_a_link_copied_with_cp_r_keep_their_names(name: str) -> None:
    # GNU cp 9.1: /dest/c holds the empty file and the link (to /w/s/x.py) under the names they had in src.
    plan = run_script(f"mkdir src\ntouch src/{name}.t\nln -s /w/s/x.py src/{name}.l\ncp -r src /dest/c\n"
                      f"rm /dest/c/{name}.t\n")
    assert in_dest(plan) == [f"/dest/c/{name}.l"]
    assert plan.image[f"/dest/c/{name}.l"].steps[-1].command == "cp"
    assert not plan.notes


def test_a_copied_folder_brings_only_what_is_in_it() -> None:
    # /w/s/xxxkeep.py lies outside src: the keep.py the build placed in /dest/c/src stays as it was.
    plan = run_script("mkdir -p /dest/c/src\ncp x.py /dest/c/src/keep.py\nmkdir src\ntouch src/t\n"
                      "touch /w/s/xxxkeep.py\ncp -r src /dest/c\nrm /dest/c/src/t\n")
    assert {path: plan.image[path].source for path in in_dest(plan)} == {"/dest/c/src/keep.py": "s/x.py"}
    assert not plan.notes


def test_a_link_copied_into_a_folder_through_a_link_to_it_is_the_folder_s_own() -> None:
    # GNU cp 9.1 makes /dest/d/k (cp -r src/. /dest/l, /dest/l -> /dest/d): rm /dest/d/k removes it, so the
    # copy of /dest/d holds nothing.
    plan = run_script("mkdir -p /dest/d\nln -s /dest/d /dest/l\nmkdir src\nln -s ../../w/s/x.py src/k\n"
                      "cp -r src/. /dest/l\nrm /dest/d/k\ncp -r /dest/d /dest/e\n")
    assert in_dest(plan) == []
    assert not plan.notes


def test_a_link_copied_into_a_folder_through_a_link_shows_what_its_target_holds_later() -> None:
    # GNU cp 9.1: /dest/d/k is made a link to ../../w/s/x.py; once x.py holds y.py's bytes, so do d/k and l/k.
    plan = run_script("mkdir -p /dest/d\nln -s /dest/d /dest/l\nmkdir src\nln -s ../../w/s/x.py src/k\n"
                      "cp -r src/. /dest/l\ncp sub/y.py x.py\n")
    assert {p: plan.image[p].source for p in in_dest(plan)} == {"/dest/d/k": "s/sub/y.py", "/dest/l/k": "s/sub/y.py"}
