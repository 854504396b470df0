"""Each patch file's header: its id matches its file name, it is UTF-8 whatever the locale, it is kept as written.

``Patch.header()`` is the DEP-3 header a reviewer reads: the summary, one
blank line, the description's body, then Patch, Origin and Last-Update.
"""

from __future__ import annotations

import locale
from pathlib import Path
from typing import Iterator

import pytest

from patcher.patchset.load import load_outline, load_patch_set

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD, PREGATHER, load_one


def test_an_underscore_in_the_file_name_stands_for_a_dash_in_the_id(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1_guard.toml": GUARD})
    (patch,) = load_patch_set(folder).patches
    assert (patch.id, patch.path) == ("v1-guard", folder / "v1_guard.toml")


def test_an_id_that_does_not_match_the_file_name_is_refused(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-length.toml": GUARD})
    assert refusal(load_patch_set, folder) == (
        f"{folder / 'v1-length.toml'}: id 'v1-guard' does not match the file name (expected 'v1-length')")


def test_a_patch_file_saved_in_latin_1_is_refused(tmp_path: Path) -> None:
    text = GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"')
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text.encode("latin-1")})
    assert refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: not UTF-8 text"
    assert refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: not UTF-8 text"


def test_a_patch_file_in_utf_8_keeps_its_accents(tmp_path: Path) -> None:
    patch = load_one(tmp_path, GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"'))
    assert patch.origin == "other, José (vendor)"


@pytest.fixture
def c_locale() -> Iterator[None]:
    """Run with the plain C locale, whose text encoding is ASCII (a bare CI container's)."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_patch_files_are_read_as_utf_8_whatever_the_locale(tmp_path: Path, c_locale: None) -> None:
    text = GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"')
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text}, series="# Reihenfolge für BI-V100\nv1-guard.toml\n")
    (patch,) = load_patch_set(folder).patches
    assert patch.origin == "other, José (vendor)"
    assert load_outline(folder).patches == (("v1-guard", "vllm/attention/ops/paged_attn.py"),)


@pytest.mark.parametrize("key", ["origin", "target", "scope"])
def test_a_missing_header_key_is_named(tmp_path: Path, key: str) -> None:
    text = "\n".join(line for line in GUARD.splitlines() if not line.startswith(f"{key} = ")) + "\n"
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text})
    assert refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: missing key '{key}'"
    assert refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: missing key '{key}'"


def test_the_header_is_kept_as_written(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD})
    patch_set = load_patch_set(folder, commit="3f2a9c1")
    (patch,) = patch_set.patches
    assert patch_set.commit == "3f2a9c1"
    assert patch_set.directory == folder
    assert patch.path == folder / "v1-guard.toml"
    assert (patch.origin, patch.last_update) == ("other, patcher project", "2026-11-29")
    assert patch.summary == "Route long decodes past V1"
    assert patch.header() == (  # one blank line after the summary, as in a commit message
        "Route long decodes past V1\n\n"
        "The vendor sends every decode to V1; V1 fails past 8192 tokens on the\n"
        "BI-V100 (shared memory), so longer contexts go to the PyTorch path.\n\n"
        "Patch: v1-guard\nOrigin: other, patcher project\nLast-Update: 2026-11-29\n")


def test_a_one_line_description_makes_a_header_without_a_body(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"pregather.toml": PREGATHER})
    (patch,) = load_patch_set(folder).patches
    assert patch.header() == "Gather the prefix once\n\nPatch: pregather\nOrigin: vendor\nLast-Update: 2026-11-30\n"


@pytest.mark.parametrize(("description", "body"), [
    ('"""\nRoute long decodes past V1\nV1 fails past 8192 tokens.\n"""', "V1 fails past 8192 tokens.\n\n"),
    ('"Route long decodes past V1\\n\\n\\n\\nV1 fails past 8192 tokens.\\n\\n"', "V1 fails past 8192 tokens.\n\n"),
    ('"""\n  Route long decodes past V1  \n\n"""', ""),
])
def test_the_header_has_one_blank_line_after_the_summary(tmp_path: Path, description: str, body: str) -> None:
    start = GUARD.index('description = """')
    end = GUARD.index('origin = ')
    patch = load_one(tmp_path, GUARD[:start] + f"description = {description}\n" + GUARD[end:])
    assert patch.header() == (
        f"Route long decodes past V1\n\n{body}Patch: v1-guard\nOrigin: other, patcher project\nLast-Update: 2026-11-29\n")


def test_a_patch_set_loaded_without_a_commit_has_none(tmp_path: Path) -> None:
    assert load_patch_set(write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD})).commit is None


def test_an_unquoted_toml_date_is_the_last_update(tmp_path: Path) -> None:
    # TOML reads `last-update = 2026-11-29` as a date, not a string.
    patch = load_one(tmp_path, GUARD.replace('last-update = "2026-11-29"', "last-update = 2026-11-29"))
    assert patch.last_update == "2026-11-29"
    assert patch.header().endswith("Last-Update: 2026-11-29\n")
    assert [str(step.pattern) for step in patch.steps] == ["use_v1 = True"]
