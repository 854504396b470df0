"""A learned patch holds on the same file written otherwise, and around code that changed elsewhere.

The vendor's next drop differs in comments, blank lines, line breaks
inside brackets and line endings (``reformatted`` builds such a copy, with
the same ``ast``), and in code the edit never touched
(``unrelated_change``). A patch learned from the plain fixture must apply
to both: on the reformatted copy it gives the edited file's syntax and
recognises its result; with unrelated code changed it gives the edited
file with that same unrelated change, byte for byte.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from patcher.patchset.runner import Status, patch_source

from tests.fixtures_edits import SHIPPED_PATH, edit_pairs, learned, load_learned, reformatted, unrelated_change

NAMES = sorted(edit_pairs())
# Reformatting the 2,000-line copy and patching it takes seconds: one edit of it is enough here.
REFORMATTED = [name for name in NAMES if name != "diagnostic-change-constant"]


@pytest.mark.parametrize("name", REFORMATTED)
def test_applies_to_the_file_reformatted_and_gives_the_edited_syntax(name: str, tmp_path: Path) -> None:
    original, edited, learned_patch = learned(name)
    patch = load_learned(learned_patch.text, name, tmp_path)
    other = reformatted(original).encode()
    assert other.count(b"\r\n") == other.count(b"\n") and b"# (reformatted)" in other
    result = patch_source(SHIPPED_PATH, other, [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].message
    assert ast.dump(ast.parse(result.patched)) == ast.dump(ast.parse(edited))
    again = patch_source(SHIPPED_PATH, result.patched, [patch])
    assert again.outcomes[0].status is Status.ALREADY_APPLIED


@pytest.mark.parametrize("name", NAMES)
def test_applies_with_unrelated_code_changed_and_keeps_that_change(name: str, tmp_path: Path) -> None:
    original, edited, learned_patch = learned(name)
    patch = load_learned(learned_patch.text, name, tmp_path)
    result = patch_source(SHIPPED_PATH, unrelated_change(original).encode(), [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].message
    assert result.patched == unrelated_change(edited).encode()


def test_mission_edits_learned_from_the_fixture_apply_to_it_reformatted(tmp_path: Path) -> None:
    from tests.fixtures_edits import MISSION_IDS, learned_mission

    for number, (patch_id, (before, after, text)) in enumerate(zip(MISSION_IDS, learned_mission()), 1):
        patch = load_learned(text, patch_id, tmp_path / str(number))
        result = patch_source(SHIPPED_PATH, reformatted(before.decode()).encode(), [patch])
        assert result.outcomes[0].status is Status.APPLIED, (number, result.outcomes[0].message)
        assert ast.dump(ast.parse(result.patched)) == ast.dump(ast.parse(after))
