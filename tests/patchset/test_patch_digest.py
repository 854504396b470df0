"""The digest the patch cache keys on follows what a patch is built from, and nothing else.

Values set, the patch's own table and any template change it; the order of
keys and TOML spacing around the table do not; the templates' digest tells
file boundaries apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patcher.patchset.load import load_patch_set, templates_digest

from tests.fixtures_patches import copy_patch_set, write_patch_set
from tests.patchset.conftest import GUARD


def _digest(tmp_path: Path, name: str, text: str, **kwargs: Any) -> str:
    folder = write_patch_set(tmp_path / name / "team", {"v1-guard.toml": text}, templates=kwargs.pop("templates", None))
    (patch,) = load_patch_set(folder, lazy=True, **kwargs).patches
    return patch.code.digest


def test_the_digest_ignores_the_order_of_keys_in_the_file(tmp_path: Path) -> None:
    reordered = GUARD.replace('origin = "other, patcher project"\nlast-update = "2026-11-29"\n',
                              'last-update = "2026-11-29"\norigin = "other, patcher project"\n')
    reordered = reordered.replace('min = 1\nhelp = "Longest', 'help = "Longest').replace(
        'decodes with V1."\n', 'decodes with V1."\nmin = 1\n')
    assert reordered != GUARD
    assert _digest(tmp_path, "a", GUARD) == _digest(tmp_path, "b", reordered)


def test_the_digest_follows_values_set_and_templates(tmp_path: Path) -> None:
    plain = _digest(tmp_path, "a", GUARD)
    assert _digest(tmp_path, "b", GUARD) == plain
    assert _digest(tmp_path, "c", GUARD, overrides=["v1-guard.limit=4096"]) != plain
    assert _digest(tmp_path, "d", GUARD, overrides=["v1-guard.limit=8192"]) == plain
    assert _digest(tmp_path, "e", GUARD, templates={"v1-guard/route.py.j2": "x = 1\n"}) != plain


def test_an_unquoted_date_gives_its_own_stable_digest(tmp_path: Path) -> None:
    dated = GUARD.replace('last-update = "2026-11-29"', "last-update = 2026-11-29")
    assert _digest(tmp_path, "a", dated) == _digest(tmp_path, "b", dated)


def test_the_templates_digest_tells_file_boundaries_apart(tmp_path: Path) -> None:
    # Content may hold NUL bytes (an editor's swap file left in the folder):
    # one file whose bytes look like two files must not digest like two.
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a").write_bytes(b"x\0b\0y")
    (two / "a").write_bytes(b"x")
    (two / "b").write_bytes(b"y")
    assert templates_digest(one) != templates_digest(two)
    assert templates_digest(tmp_path / "none") == templates_digest(tmp_path / "none-either")


def _digests(folder: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    loaded = load_patch_set(folder, overrides=overrides, templates=folder.parent / "templates", lazy=True)
    return [p.code.digest for p in loaded.patches]


def _ids(folder: Path) -> list[str]:
    return [p.id for p in load_patch_set(folder, templates=folder.parent / "templates", lazy=True).patches]


def test_the_digest_changes_with_what_a_patch_is_built_from(tmp_path: Path) -> None:
    folder = copy_patch_set(tmp_path / "set")
    first = _digests(folder)
    assert _digests(folder) == first and len(set(first)) == len(first)  # stable, and one per patch
    # A parameter value changes only its own patch's digest.
    tiered = _digests(folder, ("three-tier-decode.small_max=4096",))
    assert [a == b for a, b in zip(first, tiered)] == [p != "three-tier-decode" for p in _ids(folder)]
    # So does an edit to a patch's own table (here only the spacing inside a pattern);
    # spacing in the TOML around it is not part of the table and changes nothing.
    patch_file = folder / "prefix-buffer-reuse.toml"
    patch_file.write_text(patch_file.read_text().replace("after = ", "after   =   ", 1))
    assert _digests(folder) == first
    patch_file.write_text(patch_file.read_text().replace('"o = $STATE"', '"o  =  $STATE"', 1))
    edited = _digests(folder)
    assert [a == b for a, b in zip(first, edited)] == [p != "prefix-buffer-reuse" for p in _ids(folder)]
    # Any template can be rendered by any patch: an edit to one changes them all.
    template = sorted((folder.parent / "templates").rglob("*.j2"))[0]
    template.write_text(template.read_text() + "\n")
    assert not set(_digests(folder)) & set(edited)


def test_the_digest_reads_the_templates_folder_it_is_given(tmp_path: Path) -> None:
    # A templates folder named on the command line, away from the patches:
    # its bytes are what the patch may render, not the (empty) folder beside them.
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD})
    given = tmp_path / "shared" / "templates"
    template = given / "v1-guard" / "route.py.j2"
    template.parent.mkdir(parents=True)
    template.write_text("x = 1\n")

    def digest(templates: Path | None) -> str:
        (patch,) = load_patch_set(folder, templates=templates, lazy=True).patches
        return patch.code.digest

    first = digest(given)
    assert first == digest(given)
    assert first != digest(None)  # the templates folder beside the patches, which holds nothing
    template.write_text("x = 2\n")
    assert digest(given) != first
