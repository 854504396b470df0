"""The series file lists a patch set's patches in order; each refusal of it is one line naming the file.

Comments run from the first ``#``; a line naming a missing file gives its
line number; an id used twice, or two files whose names give one id, are
refused naming the set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.load import load_outline, load_patch_set

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD, PREGATHER


def _refused_alike(folder: Path, expected: str) -> None:
    """Check that loading FOLDER and reading only its outline (verify-sync, inspect) are both refused with EXPECTED."""
    assert refusal(load_patch_set, folder) == expected
    assert refusal(load_outline, folder) == expected


def test_a_folder_without_series_is_refused_with_a_hint(tmp_path: Path) -> None:
    folder = tmp_path / "vendor-drop"
    folder.mkdir()
    (folder / "v1-guard.toml").write_text(GUARD)
    _refused_alike(folder, f"{folder}: no 'series' file listing the patches in order (is this a patch set folder?)")


def test_a_series_of_comments_only_lists_no_patch(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD}, series="# The patch series, in order.\n\n   # v1-guard.toml\n")
    assert refusal(load_patch_set, folder) == f"{folder / 'series'}: the series lists no patch"


def test_series_comments_end_at_the_first_hash(tmp_path: Path) -> None:
    series = "# The patch series.\r\nv1-guard.toml   # see #12 and #15\r\n\r\npregather.toml#\r\n"
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER}, series=series)
    assert [p.id for p in load_patch_set(folder).patches] == ["v1-guard", "pregather"]
    assert load_outline(folder).patches == (("v1-guard", "vllm/attention/ops/paged_attn.py"),
                                            ("pregather", "vllm/attention/ops/prefix_prefill.py"))


def test_a_series_line_naming_a_missing_file_gives_its_line_number(tmp_path: Path) -> None:
    series = "# order matters\nv1-guard.toml\n\npre-gather.toml  # renamed?\n"
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER}, series=series)
    assert refusal(load_patch_set, folder) == f"{folder / 'series'}: line 4 names 'pre-gather.toml', which does not exist"


@pytest.mark.parametrize(("series", "named"), [
    pytest.param("v1-guard.toml\npregather.toml\nv1-guard.toml\n", "v1-guard", id="a-patch-listed-twice"),
    pytest.param("v1-guard.toml\npregather.toml\nv1-guard.toml\npregather.toml\n", "pregather",
                 id="the-first-duplicate-id-in-sorted-order-is-named"),
])
def test_a_patch_listed_twice_is_refused_naming_the_set(tmp_path: Path, series: str, named: str) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER}, series=series)
    _refused_alike(folder, f"{folder}: patch id '{named}' is used twice in the series")


def test_two_files_whose_names_give_one_id_are_refused(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD, "v1_guard.toml": GUARD})
    assert refusal(load_patch_set, folder) == f"{folder}: patch id 'v1-guard' is used twice in the series"


def test_a_series_file_not_in_utf_8_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD}, series="v1-guard.toml  # José\n")
    (folder / "series").write_bytes("v1-guard.toml  # José\n".encode("latin-1"))
    _refused_alike(folder, f"{folder / 'series'}: not UTF-8 text")
