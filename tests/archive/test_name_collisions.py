"""Two names that are one file on a macOS or Windows checkout are refused, in a zip and in a folder.

macOS file systems store a name in one Unicode normalisation, so 'café'
written precomposed (NFC) and decomposed (NFD) is one file there; macOS and
Windows checkouts also ignore letter case. Names are compared by Unicode's
canonical caseless match (``str.casefold`` between normalisations), file
against file and file against folder: a collision is bad input (exit 2, one
line naming both members, escaped where they would look alike, and how to
fix it), and nothing is written.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.paths import fold
from patcher.errors import BadArchive

from tests.fixtures_archives import FOLDER_VENDOR, context_folder, vendor_members, zip_of

TOP = "enginex-demo-main/"
SCRIPTS = "qwen3_6_scripts/"
NFC_NAME = unicodedata.normalize("NFC", "café_attn.py")
NFD_NAME = unicodedata.normalize("NFD", "café_attn.py")
ZIP_HINT = "(re-create the zip with one of them renamed: a macOS or Windows checkout keeps only one)"
FOLDER_HINT = "(rename one of them: a macOS or Windows checkout keeps only one)"

# Each entry: two names under qwen3_6_scripts/ that one macOS or Windows checkout cannot hold apart.
COLLIDING = {
    "NFC and NFD": (NFC_NAME, NFD_NAME),
    "letter case": ("Paged_Attn.py", "paged_attn.py"),
    "letter case and normalisation": (unicodedata.normalize("NFD", "Café_attn.py"), NFC_NAME),
    "full case folding": ("STRASSE.py", "straße.py"),
    "a Kelvin sign": ("\u212aernels.py", "kernels.py"),
    "a dotted capital I": ("\u0130ndex.py", "i\u0307ndex.py"),
    "a file and a folder by case": ("Reasoning", "reasoning/parser.py"),
    "a file and a folder by normalisation": (unicodedata.normalize("NFD", "modèles"), "modèles/qwen.py"),
    "two folders by normalisation": (unicodedata.normalize("NFD", "modèles") + "/a.py", "modèles/b.py"),
}


def colliding_zip(path: Path, first: str, second: str, filler: int = 0) -> Path:
    """Write the small vendor zip with ``first`` and ``second`` added under qwen3_6_scripts/, after ``filler`` others."""
    members = vendor_members()
    for number in range(filler):
        members[f"{TOP}vllm/model_executor/models/filler_{number:04d}.py"] = b"x = 1\n"
    members[TOP + SCRIPTS + first] = b"first\n"
    members[TOP + SCRIPTS + second] = b"second\n"
    return zip_of(path, members)


def colliding_folder(root: Path, first: str, second: str) -> Path:
    """Write a vendor folder with ``first`` and ``second`` as files under qwen3_6_scripts/ (names kept as given)."""
    folder = context_folder(root, FOLDER_VENDOR)
    for name in (first, second):
        target = folder / SCRIPTS / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(name.encode())
    # A file system that merges the names itself cannot hold this input at all.
    assert (folder / SCRIPTS / first).read_bytes() == first.encode(), "this file system merged the two names"
    return folder


def refusal(source: Path) -> str:
    with pytest.raises(BadArchive) as caught:
        with open_source(source):
            pass
    return str(caught.value)


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_names_one_checkout_cannot_hold_apart_are_refused_in_a_zip(tmp_path: Path, case: str) -> None:
    first, second = COLLIDING[case]
    message = refusal(colliding_zip(tmp_path / "v.zip", first, second))
    assert message.startswith("v.zip: members 'enginex-demo-main/qwen3_6_scripts/"), message
    assert message.endswith(ZIP_HINT), message
    assert "would collide on" in message


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_names_one_checkout_cannot_hold_apart_are_refused_in_a_folder(tmp_path: Path, case: str) -> None:
    first, second = COLLIDING[case]
    message = refusal(colliding_folder(tmp_path, first, second))
    assert message.endswith(FOLDER_HINT) and "members 'qwen3_6_scripts/" in message, message


def test_two_normalisations_are_named_apart_with_escapes(tmp_path: Path) -> None:
    message = refusal(colliding_zip(tmp_path / "v.zip", NFC_NAME, NFD_NAME))
    assert message == (
        "v.zip: members 'enginex-demo-main/qwen3_6_scripts/cafe\\u0301_attn.py' and "
        "'enginex-demo-main/qwen3_6_scripts/caf\\xe9_attn.py' are one name in two Unicode normalisations "
        f"(NFC and NFD) and would collide on macOS file systems {ZIP_HINT}")


def test_a_file_and_a_folder_that_fold_together_say_which_is_which(tmp_path: Path) -> None:
    message = refusal(colliding_zip(tmp_path / "v.zip", "Reasoning", "reasoning/parser.py"))
    assert message == (
        "v.zip: members 'enginex-demo-main/qwen3_6_scripts/Reasoning' and "
        "'enginex-demo-main/qwen3_6_scripts/reasoning' differ only in letter case and would collide on "
        f"case-insensitive file systems (the first is a file, the other a folder) {ZIP_HINT}")


def test_a_collision_deep_in_a_vendor_sized_zip_is_found(tmp_path: Path) -> None:
    source = colliding_zip(tmp_path / "v.zip", NFD_NAME, NFC_NAME, filler=1_400)
    assert "are one name in two Unicode normalisations" in refusal(source)


@pytest.mark.parametrize("names", [
    ("paged_attn.py", "paged_attn_v2.py"),
    ("café_attn.py", "cafe_attn.py"),  # an accent is not a normalisation
    ("straße.py", "strase.py"),
    (NFD_NAME, "other.py"),  # one name in NFD alone is fine
])
def test_names_that_differ_on_every_checkout_are_accepted(tmp_path: Path, names: tuple[str, str]) -> None:
    with open_source(colliding_zip(tmp_path / "v.zip", *names)) as tree:
        assert {f.path for f in tree.files()} >= {SCRIPTS + names[0], SCRIPTS + names[1]}


def test_folding_is_unicode_s_canonical_caseless_match() -> None:
    # NFD, case fold, then one normalisation: equal for every pair a checkout would merge.
    for first, second in COLLIDING.values():
        assert fold(first.split("/")[0]) == fold(second.split("/")[0])
    assert fold("A\u030a") == fold("\u00e5") == fold("\u212b")  # Å decomposed, precomposed, and the Angstrom sign
    assert fold("ǅ") == fold("ǆ") == fold("Ǆ")
    assert fold("file.py") != fold("file.py.") != fold("fi le.py")


def test_the_cli_refuses_a_colliding_zip_with_one_line_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = colliding_zip(tmp_path / "v.zip", NFC_NAME, NFD_NAME)
    before = source.read_bytes()
    for command in (("apply", source, "-o", "out.tar.gz"), ("check", source), ("verify-sync", source)):
        result = cli(*command)
        assert result.exit_code == 2, (command, result.stderr)
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
        assert "are one name in two Unicode normalisations (NFC and NFD)" in result.stderr
        assert "Traceback" not in result.stderr
    assert list(cli.cwd.iterdir()) == []
    assert source.read_bytes() == before
