"""ORIGINAL, EDITED and VENDOR that ``new --from-edit`` cannot learn from are refused, each with a hint that works.

A file that is missing or not a file, that does not decode or round-trip,
whose encoding, line endings or final newline the edit changed, an edit
that changes nothing or only the comments at the end of the file; an
ORIGINAL that VENDOR does not hold byte for byte, that several shipped
files hold, or that VENDOR holds only with other line endings; an edited
tree that gained a file or changed nothing; an id too long once a file's
name is added to it. Each is one ``error:`` line (exit 2) naming the
file, and nothing is written. ``--target`` names the file when ORIGINAL
alone cannot, with a note when ORIGINAL is not VENDOR's copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.from_edit import EditRefused, learn_patch

from tests.fixtures_edits import VENDOR_TEXT, add_guard, crlf, edited_copy, write
from tests.fixtures_patches import copy_patch_set, one_error_line
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

TARGET = "vllm/attention/ops/paged_attn.py"
# A module as small as a hurried engineer's scratch copy: one class, one method.
SMALL = "import torch\n\n\nclass A:\n    def f(self, x):\n        y = x + 1\n        return y\n"
PARSER = "qwen3_6_scripts/reasoning/qwen3_reasoning_parser.py"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _refused(original: bytes, edited: bytes) -> str:
    with pytest.raises(EditRefused) as refused:
        learn_patch("x", original, edited, target="x.py", shipped="x.py", original_name="o.py", edited_name="e.py")
    text = str(refused.value)
    assert "\n" not in text
    return text


def _new(cli: Any, tmp_path: Path, *args: object) -> tuple[str, Path, dict[str, bytes]]:
    """Run ``patcher new hand-edit --from-edit ARGS`` on a copy of the patch set; return its one error line."""
    team = copy_patch_set(tmp_path / "team")
    before = _snapshot(team)
    line = one_error_line(cli("new", "hand-edit", "--from-edit", *args, "--patches", team))
    assert _snapshot(team) == before
    return line, team, before


# --------------------------------------------------------------------------- the two files


def test_a_missing_original_or_an_edited_folder_is_named_as_such(cli: Any, tmp_path: Path) -> None:
    edited = write(tmp_path / "e.py", add_guard(VENDOR_TEXT))
    line, _, _ = _new(cli, tmp_path, VENDOR_ZIP, tmp_path / "missing.py", edited)
    assert line == (f"error: {tmp_path / 'missing.py'}: ORIGINAL: no such file (give the vendor file as you copied "
                    "it and your edited copy)")
    original = write(tmp_path / "o.py", VENDOR_TEXT)
    line, _, _ = _new(cli, tmp_path / "again", VENDOR_ZIP, original, tmp_path)
    assert line == (f"error: {tmp_path}: EDITED: not a regular file (give the vendor file as you copied it and "
                    "your edited copy)")


def test_an_edited_file_that_does_not_decode_is_refused() -> None:
    assert _refused(SMALL.encode(), b"\xff\xfe" + SMALL.encode()) == (
        "e.py: cannot be decoded (invalid or missing encoding declaration) (save it as UTF-8, or declare its "
        "encoding with a coding line)")


def test_lone_cr_line_endings_are_refused() -> None:
    assert _refused(SMALL.encode(), SMALL.replace("\n", "\r").encode()) == (
        "e.py: does not round-trip byte for byte (lone CR line endings?) (convert it to LF or CRLF line endings "
        "first)")


def test_a_changed_encoding_is_refused_naming_both() -> None:
    latin = ("# -*- coding: latin-1 -*-\n" + SMALL).encode("latin-1")
    assert _refused(SMALL.encode(), latin) == "e.py: is encoded as iso-8859-1, o.py as utf-8 (save it as utf-8, then run this again)"


def test_a_final_newline_added_or_removed_is_refused() -> None:
    removed = _refused(SMALL.encode(), SMALL.replace("x + 1", "x + 2").rstrip("\n").encode())
    assert removed == ("e.py: ends without a final newline and o.py does not: a patch keeps the file's last line as "
                       "it is (make its end as o.py's, then run this again)")
    added = _refused(SMALL.rstrip("\n").encode(), SMALL.encode())
    assert added == ("e.py: ends with a final newline and o.py does not: a patch keeps the file's last line as it "
                     "is (make its end as o.py's, then run this again)")
    # Both without one: the edit is learned, and the last line stays unterminated.
    patch = learn_patch("x", SMALL.rstrip("\n").encode(), SMALL.replace("x + 1", "x + 2").rstrip("\n").encode(),
                        target="x.py", shipped="x.py")
    assert "y = x + 2" in patch.text


def test_converted_line_endings_are_refused_naming_both_endings() -> None:
    assert _refused(crlf(SMALL).encode(), SMALL.replace("x + 1", "x + 2").encode()) == (
        "e.py: has LF line endings and o.py CRLF: a patch keeps the vendor file's line endings, so the edit cannot "
        "be compared line by line (convert e.py back to CRLF line endings (your editor's setting), then run this "
        "again)")


def test_an_unchanged_file_is_not_an_edit() -> None:
    assert _refused(SMALL.encode(), SMALL.encode()) == (
        "e.py: it is the same as ORIGINAL: there is no edit to learn (edit the file first, then run this again)")


def test_comments_changed_at_the_end_of_the_file_are_refused() -> None:
    line = _refused((SMALL + "# end\n").encode(), (SMALL.replace("x + 1", "x + 2") + "# the end\n").encode())
    assert line == ("e.py: the comments or blank lines at the end of the file changed: patterns match statements, "
                    "so no step can say it (leave the comments outside classes and functions as they were)")


# --------------------------------------------------------------------------- finding ORIGINAL in VENDOR


def test_an_original_vendor_does_not_hold_is_refused_and_target_learns_it_with_a_note(
        cli: Any, tmp_path: Path) -> None:
    # A copy taken from an older drop: one import differs from the zip's.
    older = VENDOR_TEXT.replace("import torch", "import torch, os", 1)
    original, edited = write(tmp_path / "o.py", older), write(tmp_path / "e.py", add_guard(older))
    line, team, _ = _new(cli, tmp_path, VENDOR_ZIP, original, edited)
    assert line == (f"error: {original}: no file of {VENDOR_ZIP} has ORIGINAL's bytes (copy the file out of that "
                    "drop unchanged, or say which file it is with --target PATH)")
    result = cli("new", "hand-edit", "--from-edit", VENDOR_ZIP, original, edited, "--target", TARGET,
                 "--patches", team)
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"note: {original} is not byte for byte VENDOR's {SHIPPED}: the patch was checked "
                             f"on {original}\n")
    assert f"wrote {team / 'hand-edit.toml'}: 1 step(s) on {TARGET} ({SHIPPED})" in result.stdout


def test_a_target_the_image_does_not_ship_is_refused(cli: Any, tmp_path: Path) -> None:
    original, edited = write(tmp_path / "o.py", VENDOR_TEXT), write(tmp_path / "e.py", add_guard(VENDOR_TEXT))
    line, team, _ = _new(cli, tmp_path, VENDOR_ZIP, original, edited, "--target", "vllm/nothing.py")
    assert line.startswith(f"error: {VENDOR_ZIP}: --target vllm/nothing.py: nothing the image ships lands at ")
    assert line.endswith(f"(run 'patcher inspect {VENDOR_ZIP} --patches {team}' to see what the build copies where)")


def test_an_original_with_converted_line_endings_names_the_file_it_matches(cli: Any, tmp_path: Path) -> None:
    original = write(tmp_path / "o.py", crlf(VENDOR_TEXT))
    edited = write(tmp_path / "e.py", crlf(add_guard(VENDOR_TEXT)))
    line, _, _ = _new(cli, tmp_path, VENDOR_ZIP, original, edited)
    assert line == (f"error: {original}: ORIGINAL matches {SHIPPED} of {VENDOR_ZIP} only with its line endings "
                    f"changed (copy {SHIPPED} out of the drop again without converting its line endings, and redo "
                    "the edit there)")


def test_an_original_two_shipped_files_hold_needs_target(cli: Any, vendor_copy: Path, tmp_path: Path) -> None:
    # reasoning/ ships whole (cp -r): a second parser, copied from the first, has the same bytes.
    shutil.copy(vendor_copy / PARSER, vendor_copy / "qwen3_6_scripts/reasoning/other_parser.py")
    text = (vendor_copy / PARSER).read_text(encoding="utf-8")
    original = write(tmp_path / "o.py", text)
    edited = write(tmp_path / "e.py", text.replace('end_token = "</think>"', 'end_token = "</reasoning>"'))
    line, team, _ = _new(cli, tmp_path, vendor_copy, original, edited)
    assert line == (f"error: {original}: 2 shipped files have ORIGINAL's bytes: qwen3_6_scripts/reasoning/"
                    "other_parser.py, qwen3_6_scripts/reasoning/qwen3_reasoning_parser.py (say which with --target "
                    "PATH (its path in the image))")
    result = cli("new", "hand-edit", "--from-edit", vendor_copy, original, edited, "--target",
                 "vllm/reasoning/qwen3_reasoning_parser.py", "--patches", team)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # ORIGINAL is that file, byte for byte: no note
    assert 'target = "vllm/reasoning/qwen3_reasoning_parser.py"' in (team / "hand-edit.toml").read_text()


# --------------------------------------------------------------------------- an edited tree


def test_a_tree_that_gained_a_file_is_refused(cli: Any, tmp_path: Path) -> None:
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    write(tree / "qwen3_6_scripts" / "fast_decode.py", "def decode():\n    pass\n")
    line, _, _ = _new(cli, tmp_path, VENDOR_ZIP, tree)
    assert line == (f"error: {tree}: qwen3_6_scripts/fast_decode.py is new in the edited tree; a patch rewrites "
                    "code, it cannot add a file (move the new code into a file the image already ships)")


def test_an_unchanged_tree_is_refused(cli: Any, tmp_path: Path) -> None:
    tree = edited_copy(tmp_path)
    line, _, _ = _new(cli, tmp_path, VENDOR_ZIP, tree)
    assert line == (f"error: {tree}: no file the image ships changed (edit the shipped copy, then run this again)")


def test_an_id_too_long_with_a_files_name_added_is_refused_before_anything_is_written(
        cli: Any, tmp_path: Path) -> None:
    from patcher.patchset.load import MAX_ID_LENGTH

    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    sequence = tree / "qwen3_6_scripts" / "sequence.py"
    sequence.write_bytes(sequence.read_bytes().replace(b"return status > SequenceStatus.SWAPPED",
                                                       b"return status >= SequenceStatus.FINISHED_STOPPED"))
    long_id = "a" * (MAX_ID_LENGTH - len("-sequence") + 1)  # fits alone; 'ID-paged-attn' and 'ID-sequence' do not
    team = copy_patch_set(tmp_path / "team")
    before = _snapshot(team)
    line = one_error_line(cli("new", long_id, "--from-edit", VENDOR_ZIP, tree, "--patches", team))
    # The hint is the one for a long id (a shorter one works), not the one for a malformed id.
    assert line.endswith(f"' is not a patch id: {len(long_id) + len('-paged-attn')} characters, more than "
                         f"{MAX_ID_LENGTH} (choose a shorter id, e.g. 'decode-fast-path')")
    assert _snapshot(team) == before


def test_one_refused_patch_of_a_tree_writes_none_of_them(cli: Any, tmp_path: Path) -> None:
    # The second file's patch id is taken: the first patch, already written, is removed and the series put back.
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    sequence = tree / "qwen3_6_scripts" / "sequence.py"
    sequence.write_bytes(sequence.read_bytes().replace(b"return status > SequenceStatus.SWAPPED",
                                                       b"return status >= SequenceStatus.FINISHED_STOPPED"))
    team = copy_patch_set(tmp_path / "team")
    (team / "bring-up-sequence.toml").write_text("# someone else's patch, not yet listed\n")
    before = _snapshot(team)
    line = one_error_line(cli("new", "bring-up", "--from-edit", VENDOR_ZIP, tree, "--patches", team))
    assert line == (f"error: {team / 'bring-up-sequence.toml'}: patch 'bring-up-sequence' already exists "
                    "(choose another id, or edit the existing patch)")
    assert _snapshot(team) == before
