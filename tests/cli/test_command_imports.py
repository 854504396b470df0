"""What each command imports: the read-only ones start without libcst, Jinja2 or GitPython.

Each command runs in a fresh interpreter (``probe_imports``: a module once
imported stays in ``sys.modules``, so an in-process run would see what
earlier tests loaded), which reports the exit code and the heavy modules
loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_patches import break_first_step, copy_patch_set, probe_imports
from tests.fixtures_vendor import SHIPPED


@pytest.mark.parametrize("command, exit_code", [("verify-sync", 0), ("inspect", 0)])
def test_read_only_commands_load_no_heavy_library(tmp_path: Path, vendor_copy: Path, command: str,
                                                  exit_code: int) -> None:
    # In sync: verify-sync runs the series only to say whether apply would re-sync a drifted copy.
    (vendor_copy / "paged_attn.py").write_bytes((vendor_copy / SHIPPED).read_bytes())
    assert probe_imports(command, vendor_copy) == {"exit": exit_code, "heavy": [], "writer": False}


def test_check_renders_no_patch(tmp_path: Path, vendor_zip: Path) -> None:
    # check needs the patches' targets only (install-fails-loudly), and the
    # rules read the stdlib ast: neither the loader's libraries nor libcst
    # load. The vendor release passes (its V2 call cannot run: a note).
    report = probe_imports("check", vendor_zip)
    assert report["exit"] == 0
    assert not {"libcst", "jinja2", "git"} & set(report["heavy"])  # type: ignore[arg-type]
    assert report["writer"] is False


def test_diff_loads_no_archive_writer_and_no_git(tmp_path: Path, vendor_zip: Path) -> None:
    report = probe_imports("diff", "--no-color", vendor_zip)
    assert report["exit"] == 0
    assert "git" not in report["heavy"]  # type: ignore[operator]
    assert report["writer"] is False


def test_the_probe_sees_heavy_libraries_when_they_load(tmp_path: Path, vendor_zip: Path) -> None:
    # apply parses and renders: if the wrapper reported nothing here, the test above would prove nothing.
    report = probe_imports("apply", vendor_zip, "-o", tmp_path / "out.tar.gz")
    assert report["exit"] == 0
    assert {"libcst", "jinja2"} <= set(report["heavy"])  # type: ignore[arg-type]
    assert report["writer"] is True


def test_read_only_commands_need_only_the_targets_of_the_patches(tmp_path: Path, vendor_zip: Path) -> None:
    # A step that does not build stops apply, but not the commands that only
    # ask where the patches' targets ship.
    patches = copy_patch_set(tmp_path)
    break_first_step(patches)
    assert probe_imports("apply", vendor_zip, "--patches", patches, "-o", tmp_path / "out.tar.gz")["exit"] == 2
    assert probe_imports("verify-sync", vendor_zip, "--patches", patches)["exit"] == 1
    assert probe_imports("inspect", vendor_zip, "--patches", patches)["exit"] == 0


def test_an_apply_the_caches_answer_loads_no_heavy_library(tmp_path: Path, vendor_zip: Path) -> None:
    # The daily CI case: the same drop, the same patches. The patch cache answers without libcst
    # or Jinja2 (the manifest is json.dumps' work), and the rule cache without a parse.
    cache = tmp_path / "cache"
    first = probe_imports("apply", vendor_zip, "-o", tmp_path / "first.tar.gz", cache=cache)
    assert first["exit"] == 0 and {"libcst", "jinja2"} <= set(first["heavy"])  # type: ignore[arg-type]
    again = probe_imports("apply", vendor_zip, "-o", tmp_path / "again.tar.gz", cache=cache)
    assert again == {"exit": 0, "heavy": [], "writer": True}
    assert (tmp_path / "again.tar.gz").read_bytes() == (tmp_path / "first.tar.gz").read_bytes()
