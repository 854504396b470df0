"""``patcher new ID --from-edit VENDOR EDITED_TREE``: every changed shipped ``.py`` file becomes a patch.

The edited tree is the vendor tree with hand edits in place. Files the
image ships are learned (one changed file: patch ID; several: ``ID-<file>``
each, since a patch has one target), all written inactive or none. Files
that never ship (the stale root ``paged_attn.py``) are left out with a
note that names the copy the image ships; a tree whose only edits never
ship, or that lost or gained a file, is refused (exit 2, nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fixtures_edits import add_guard, edited_copy, write
from tests.fixtures_patches import copy_patch_set, one_error_line, write_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

SEQUENCE = "qwen3_6_scripts/sequence.py"


def _edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))


def test_a_tree_with_the_shipped_copy_edited_gives_one_patch_and_a_note_for_the_stale_copy(
        cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    _edit(tree / "paged_attn.py", b"import torch", b"import torch, os")  # the stale root copy
    result = cli("new", "empty-batch-guard", "--from-edit", VENDOR_ZIP, tree, "--patches", team)
    assert result.exit_code == 0, result.output
    assert result.stderr == ("note: paged_attn.py changed, but the image does not ship it: the edit there is left "
                             "out (the image ships qwen3_6_scripts/paged_attn.py)\n")
    assert f"wrote {team / 'empty-batch-guard.toml'}: 1 step(s) on vllm/attention/ops/paged_attn.py" in result.stdout
    assert (team / "series").read_text().endswith(
        "# empty-batch-guard.toml  # inactive until 'patcher test --activate empty-batch-guard' passes\n")
    scratch = write_patch_set(tmp_path / "only", {"empty-batch-guard.toml": (team / "empty-batch-guard.toml").read_text()})
    assert cli("apply", VENDOR_ZIP, "-o", tmp_path / "out", "--patches", scratch).exit_code == 0
    assert (tmp_path / "out" / SHIPPED).read_bytes() == (tree / SHIPPED).read_bytes()


def test_two_shipped_files_edited_give_one_patch_each(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    _edit(tree / SEQUENCE, b"return status > SequenceStatus.SWAPPED",
          b"return status >= SequenceStatus.FINISHED_STOPPED")  # a CRLF file
    result = cli("new", "bring-up", "--from-edit", VENDOR_ZIP, tree, "--patches", team)
    assert result.exit_code == 0, result.output
    assert (team / "series").read_text().splitlines()[-2:] == [
        "# bring-up-paged-attn.toml  # inactive until 'patcher test --activate bring-up-paged-attn' passes",
        "# bring-up-sequence.toml  # inactive until 'patcher test --activate bring-up-sequence' passes",
    ]
    assert 'target = "vllm/sequence.py"' in (team / "bring-up-sequence.toml").read_text()
    files = {f"{name}.toml": (team / f"{name}.toml").read_text() for name in ("bring-up-paged-attn", "bring-up-sequence")}
    scratch = write_patch_set(tmp_path / "both", files)
    assert cli("apply", VENDOR_ZIP, "-o", tmp_path / "out", "--patches", scratch).exit_code == 0
    for path in (SHIPPED, SEQUENCE):
        assert (tmp_path / "out" / path).read_bytes() == (tree / path).read_bytes()


def test_a_tree_whose_only_edit_never_ships_is_refused_naming_the_shipped_copy(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    before = (team / "series").read_bytes()
    tree = edited_copy(tmp_path)
    _edit(tree / "paged_attn.py", b"import torch", b"import torch, os")
    line = one_error_line(cli("new", "root-fix", "--from-edit", VENDOR_ZIP, tree, "--patches", team))
    assert "no file the image ships changed (only paged_attn.py, which never ships)" in line
    assert f"(edit the shipped copy ({SHIPPED}), then run this again)" in line
    assert (team / "series").read_bytes() == before and not (team / "root-fix.toml").exists()


def test_a_tree_that_lost_a_shipped_file_is_refused(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    (tree / SEQUENCE).unlink()
    line = one_error_line(cli("new", "bring-up", "--from-edit", VENDOR_ZIP, tree, "--patches", team))
    assert f"{SEQUENCE} is gone from the edited tree" in line
    assert not (team / "bring-up.toml").exists()


def test_scope_applies_to_every_file_of_a_tree(cli: Any, tmp_path: Path) -> None:
    # --scope names where each change is learned, for a tree as for ORIGINAL EDITED: a scope that
    # does not hold the edit is refused with the scope the change is in, and nothing is written.
    team = copy_patch_set(tmp_path / "team")
    before = (team / "series").read_bytes()
    tree = edited_copy(tmp_path)
    write(tree / SHIPPED, add_guard((tree / SHIPPED).read_text()))
    line = one_error_line(cli("new", "guard", "--from-edit", VENDOR_ZIP, tree,
                              "--scope", "PagedAttention.write_to_paged_cache", "--patches", team))
    assert "the change is outside --scope PagedAttention.write_to_paged_cache" in line
    assert "leave --scope out: this change is in PagedAttention.forward_decode" in line
    assert (team / "series").read_bytes() == before and not (team / "guard.toml").exists()
    result = cli("new", "guard", "--from-edit", VENDOR_ZIP, tree, "--scope", "PagedAttention.forward_decode",
                 "--patches", team)
    assert result.exit_code == 0, result.output
    assert 'scope = "PagedAttention.forward_decode"' in (team / "guard.toml").read_text()
