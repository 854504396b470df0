"""``patcher new`` writes where the author works: ``--patches``, else the nearest ``patches/`` above, keeping ``series`` as it was.

Like git finding ``.git``, it walks up from the current folder to the
first ``patches/`` folder holding a ``series`` file; it never falls back
to the set installed with patcher, and with none found it refuses (exit 2)
with a hint that works. It rewrites ``series`` in one step (a file beside
it, renamed over it) with the file's own mode and line endings, leaves no
temporary file, and on a failure leaves both files as they were. The
file beside it is hidden and named for the series (``.series-*.tmp``),
wherever the system's temporary folder is: one on another file system
could not be renamed over the series.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from patcher.resources import nearest_patches_dir

from tests.fixtures_patches import copy_patch_set, one_error_line
from tests.fixtures_vendor import PATCHES

NEW = ("new", "decode-fast-path", "--target", "vllm/attention/ops/paged_attn.py", "--scope",
       "PagedAttention.forward_decode")


def checkout(folder: Path) -> Path:
    """Lay out a team's checkout in FOLDER: its patch set with templates, and a deep source folder; return the deep one."""
    copy_patch_set(folder)
    deep = folder / "src" / "engine" / "ops"
    deep.mkdir(parents=True)
    return deep


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under FOLDER and its bytes, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_new_from_a_subfolder_writes_into_the_nearest_patch_set_above(cli: Any, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    deep = checkout(tmp_path / "team")
    bundled = snapshot(PATCHES)
    monkeypatch.chdir(deep)
    result = cli(*NEW)
    assert result.exit_code == 0, result.output
    patches = tmp_path / "team" / "patches"
    assert (patches / "decode-fast-path.toml").is_file()
    assert "decode-fast-path.toml" in (patches / "series").read_text()
    assert f"wrote {patches / 'decode-fast-path.toml'}" in result.stdout
    assert snapshot(PATCHES) == bundled  # the set installed with patcher is never the default
    assert not (deep / "patches").exists()


def test_new_finds_the_set_from_inside_it_and_from_its_templates(cli: Any, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    checkout(tmp_path / "team")
    patches = tmp_path / "team" / "patches"
    for where, patch_id in ((patches, "from-inside"), (tmp_path / "team" / "templates" / "three-tier-decode", "from-templates")):
        monkeypatch.chdir(where)
        result = cli("new", patch_id, *NEW[2:])
        assert result.exit_code == 0, result.output
        assert (patches / f"{patch_id}.toml").is_file()
    assert nearest_patches_dir(patches) == patches


def test_a_patches_folder_without_a_series_is_passed_over(cli: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # src/patches/ is some other folder of that name: the walk goes on to the patch set above it.
    deep = checkout(tmp_path / "team")
    (tmp_path / "team" / "src" / "patches").mkdir()
    monkeypatch.chdir(deep)
    assert cli(*NEW).exit_code == 0
    assert (tmp_path / "team" / "patches" / "decode-fast-path.toml").is_file()
    assert list((tmp_path / "team" / "src" / "patches").iterdir()) == []


def test_new_outside_any_patch_set_is_refused_with_a_hint_that_works(cli: Any, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert nearest_patches_dir(tmp_path) is None, "this machine has a patches/series above the test's folder"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    line = one_error_line(cli(*NEW))
    assert line == (f"error: {elsewhere}: no patch set here: no 'patches' folder with a 'series' file in this folder "
                    "or any folder above it (pass --patches DIR, or run from inside a checkout of the patch set)")
    assert list(elsewhere.iterdir()) == []
    # The hint: the same command with --patches.
    patches = copy_patch_set(tmp_path / "team")
    assert cli(*NEW, "--patches", patches).exit_code == 0
    assert (patches / "decode-fast-path.toml").is_file()


def test_patches_option_wins_over_the_nearest_set(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = checkout(tmp_path / "team")
    other = copy_patch_set(tmp_path / "other")
    monkeypatch.chdir(deep)
    assert cli(*NEW, "--patches", other).exit_code == 0
    assert (other / "decode-fast-path.toml").is_file()
    assert not (tmp_path / "team" / "patches" / "decode-fast-path.toml").exists()


def test_test_from_a_subfolder_reads_the_same_nearest_set(cli: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    deep = checkout(tmp_path / "team")
    monkeypatch.chdir(deep)
    assert cli(*NEW).exit_code == 0
    result = cli("test", "decode-fast-path")
    assert result.exit_code == 1  # its example is not written yet: it was found, in the team's set
    assert "FAIL  decode-fast-path: examples: patch decode-fast-path: example not written yet" in result.stdout


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640, 0o600, 0o444])
def test_new_keeps_the_series_files_mode(cli: Any, tmp_path: Path, mode: int) -> None:
    patches = copy_patch_set(tmp_path / "team")
    os.chmod(patches / "series", mode)
    assert cli(*NEW, "--patches", patches).exit_code == 0
    assert stat.S_IMODE(os.stat(patches / "series").st_mode) == mode
    assert "decode-fast-path.toml" in (patches / "series").read_text()


def test_new_leaves_no_temporary_file_beside_the_series(cli: Any, tmp_path: Path) -> None:
    patches = copy_patch_set(tmp_path / "team")
    before = {p.name for p in patches.iterdir()}
    assert cli(*NEW, "--patches", patches).exit_code == 0
    assert {p.name for p in patches.iterdir()} == before | {"decode-fast-path.toml"}


def test_the_series_is_renamed_over_from_a_hidden_temporary_beside_it(cli: Any, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    patches = copy_patch_set(tmp_path / "team")
    os.chmod(patches / "series", 0o640)
    elsewhere = tmp_path / "tmp"  # the system's temporary folder, here on another file system (a tmpfs /tmp)
    elsewhere.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(elsewhere))
    import patcher.authoring.series_file as series_file

    renamed = []
    real_replace = os.replace

    def replace(source: str, target: str) -> None:
        if os.path.dirname(os.path.realpath(source)) != os.path.dirname(os.path.realpath(target)):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        renamed.append((Path(source), stat.S_IMODE(os.stat(source).st_mode), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(series_file.os, "replace", replace)
    assert cli(*NEW, "--patches", patches).exit_code == 0
    ((source, mode),) = [(source, mode) for source, mode, target in renamed if target == patches / "series"]
    # Hidden, and named for the series: what a run killed before the rename leaves says what it was.
    assert source.parent == patches and re.fullmatch(r"\.series-\w+\.tmp", source.name), source
    assert mode == 0o640  # the series' mode before the rename, never mkstemp's 0600
    assert list(elsewhere.iterdir()) == []
    assert "decode-fast-path.toml" in (patches / "series").read_text()


def test_a_series_that_is_a_link_inside_the_set_stays_a_link(cli: Any, tmp_path: Path) -> None:
    patches = copy_patch_set(tmp_path / "team")
    (patches / "series").rename(patches / "series.txt")
    os.chmod(patches / "series.txt", 0o640)
    (patches / "series").symlink_to("series.txt")
    assert cli(*NEW, "--patches", patches).exit_code == 0
    assert (patches / "series").is_symlink() and os.readlink(patches / "series") == "series.txt"
    assert "decode-fast-path.toml" in (patches / "series.txt").read_text()
    assert stat.S_IMODE(os.stat(patches / "series.txt").st_mode) == 0o640


def test_a_series_that_cannot_be_replaced_leaves_both_files_as_they_were(cli: Any, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    patches = copy_patch_set(tmp_path / "team")
    before = snapshot(patches)
    import patcher.authoring.series_file as series_file

    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(series_file.os, "replace", refuse)
    line = one_error_line(cli(*NEW, "--patches", patches))
    assert line == f"error: {patches / 'series'}: cannot write: Permission denied"
    assert snapshot(patches) == before  # no patch file, no temporary, the series untouched


def test_a_series_linked_out_of_the_set_is_refused_and_left_alone(cli: Any, tmp_path: Path) -> None:
    # The series a reviewer would not look at: a link to a file outside the patch folder.
    patches = copy_patch_set(tmp_path / "team")
    outside = tmp_path / "elsewhere-series"
    outside.write_bytes((patches / "series").read_bytes())
    (patches / "series").unlink()
    (patches / "series").symlink_to(outside)
    line = one_error_line(cli(*NEW, "--patches", patches))
    assert "leads outside the patch folder" in line
    assert outside.read_bytes() == (PATCHES / "series").read_bytes()
    assert not (patches / "decode-fast-path.toml").exists()
