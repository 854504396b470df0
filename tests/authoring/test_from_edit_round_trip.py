"""A patch learned by ``new --from-edit`` turns the original into exactly the edited bytes.

On every hand edit of ``tests/fixtures_edits.py`` (a changed constant, a
class attribute, a guard, a helper method and its call, an edit inside the
``try`` of ``_forward_prefix_pytorch`` with ``{{`` in an f-string, a CRLF
copy, and a 2,000-line diagnostic version): the learned patch applied to
the original gives the edited bytes, reports "already applied" on them,
and passes ``patcher test``. Through the CLI, the patch is written
inactive and ``apply`` with it on the vendor zip ships the edited file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.cases import patch_cases, run_case
from patcher.patchset import PatchSet
from patcher.patchset.runner import Status, patch_source

from tests.fixtures_edits import SHIPPED_PATH, VENDOR_TEXT, add_guard, edit_pairs, learned, load_learned, write
from tests.fixtures_patches import copy_patch_set, write_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP


@pytest.mark.parametrize("name", sorted(edit_pairs()))
def test_learned_patch_gives_the_edited_bytes_and_recognises_them(name: str, tmp_path: Path) -> None:
    original, edited, learned_patch = learned(name)
    patch = load_learned(learned_patch.text, name, tmp_path)
    result = patch_source(SHIPPED_PATH, original.encode(), [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].message
    assert result.patched == edited.encode()
    again = patch_source(SHIPPED_PATH, edited.encode(), [patch])
    assert again.outcomes[0].status is Status.ALREADY_APPLIED and again.patched == edited.encode()
    # patcher test's own cases: the example before/after in LF and CRLF, recognised, twice is a no-op.
    cases = patch_cases(PatchSet(tmp_path, (patch,)), [patch])
    assert len(cases) == 6
    failed = [(case.label, result.message) for case in cases if not (result := run_case(case)).passed]
    assert failed == []


@pytest.mark.parametrize("name", ["add-guard", "edit-inside-try"])
def test_learned_patch_has_a_marker_absent_from_the_original_and_an_example_of_its_scope(name: str) -> None:
    original, edited, learned_patch = learned(name)
    assert learned_patch.markers
    for marker in learned_patch.markers:
        assert marker.pattern.strip() in edited and marker.pattern.strip() not in original
    text = learned_patch.text
    example = text[text.index("[[examples]]"):]
    # The example holds the edited scope, not the whole file (no module-level imports).
    assert "def forward_decode" in example or "def _forward_prefix_pytorch" in example
    assert "import torch" not in example


def test_an_fstring_with_braces_survives_the_templates_jinja_rendering(tmp_path: Path) -> None:
    original, edited, learned_patch = learned("edit-inside-try")
    assert "{{ '{' }}{paged_attn}}" in learned_patch.text  # escaped for Jinja in the TOML
    patch = load_learned(learned_patch.text, "edit-inside-try", tmp_path)
    assert b'print(f"{{paged_attn}} seq {i}' in patch_source(SHIPPED_PATH, original.encode(), [patch]).patched


def test_the_added_code_reads_of_the_vendor_become_requires() -> None:
    _, _, learned_patch = learned("edit-inside-try")
    # The log line reads ctx_len, which the scope assigns before it and the anchor does not mention.
    assert [m.pattern for m in learned_patch.requires] == ["ctx_len = $_"]


def test_cli_writes_the_patch_inactive_and_apply_then_ships_the_edited_file(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    os.chmod(team / "series", 0o640)
    series_before = (team / "series").read_bytes()
    original = write(tmp_path / "work" / "paged_attn.orig.py", VENDOR_TEXT)
    edited = write(tmp_path / "work" / "paged_attn.py", add_guard(VENDOR_TEXT))
    result = cli("new", "empty-batch-guard", "--from-edit", VENDOR_ZIP, original, edited, "--patches", team)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert f"wrote {team / 'empty-batch-guard.toml'}: 1 step(s) on vllm/attention/ops/paged_attn.py ({SHIPPED})" \
        in result.stdout
    assert "step 1: replace in PagedAttention.forward_decode, at lines " in result.stdout
    assert "patcher test --activate empty-batch-guard" in result.stdout
    # Listed commented out, after the others; the series keeps its mode.
    assert (team / "series").read_bytes() == series_before + \
        b"# empty-batch-guard.toml  # inactive until 'patcher test --activate empty-batch-guard' passes\n"
    assert stat.S_IMODE((team / "series").stat().st_mode) == 0o640
    text = (team / "empty-batch-guard.toml").read_text()
    assert 'target = "vllm/attention/ops/paged_attn.py"' in text

    # apply with the learned patch alone (the template folder beside it) ships EDITED byte for byte.
    scratch = write_patch_set(tmp_path / "only", {"empty-batch-guard.toml": text})
    out = tmp_path / "out"
    applied = cli("apply", VENDOR_ZIP, "-o", out, "--patches", scratch)
    assert applied.exit_code == 0, applied.output
    assert (out / SHIPPED).read_bytes() == edited.read_bytes()
    again = cli("apply", out, "-o", tmp_path / "again", "--patches", scratch)
    assert again.exit_code == 0 and "already applied" in again.stderr


def test_a_crlf_series_keeps_its_line_endings_and_an_unterminated_last_line(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    (team / "series").write_bytes(b"three-tier-decode.toml\r\nprefix-pregather.toml")
    original = write(tmp_path / "a.py", VENDOR_TEXT)
    edited = write(tmp_path / "b.py", add_guard(VENDOR_TEXT))
    assert cli("new", "guard", "--from-edit", VENDOR_ZIP, original, edited, "--patches", team).exit_code == 0
    assert (team / "series").read_bytes() == (b"three-tier-decode.toml\r\nprefix-pregather.toml\r\n"
                                              b"# guard.toml  # inactive until 'patcher test --activate guard' passes\r\n")
