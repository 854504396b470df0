"""``check`` honours the overrides ``apply --allow`` recorded in the manifest, so apply's output always passes.

A manifest edited by hand is an error that says where and what to do,
never a silent loss of the override or a crash.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.checks.inputs import check_path, manifest_overrides
from patcher.errors import PatcherError

from tests.fixtures_rules import POLICY
from tests.fixtures_vendor import VENDOR_TREE

REASON = "lab card, Triton build under test (ticket 42)"


def _tree_with_manifest(tmp_path: Path, manifest: object) -> Path:
    tree = tmp_path / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, tree)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    (tree / "patcher-manifest.json").write_text(text)
    return tree


def test_overrides_recorded_by_apply_count_with_their_reason(tmp_path: Path) -> None:
    tree = _tree_with_manifest(tmp_path, {"patches": [], "allowed_rules": [
        {"rule": "no-triton-kernels", "reason": REASON}]})
    result = check_path(tree, POLICY, allowed=[("python-3.10", "checked by hand")])
    assert result.allowed == {"no-triton-kernels": f"{REASON} (recorded in patcher-manifest.json)",
                              "python-3.10": "checked by hand"}


def test_a_manifest_without_overrides_allows_nothing(tmp_path: Path) -> None:
    tree = _tree_with_manifest(tmp_path, {"patches": ["three-tier-decode"]})
    with open_source(tree) as source:
        assert manifest_overrides(source) == ()
    assert check_path(tree, POLICY).allowed == {}


@pytest.mark.parametrize("manifest", [
    '{"allowed_rules": [{"rule": "no-triton-kernels"}]}',  # the reason was deleted
    '{"allowed_rules": "no-triton-kernels"}',
    '["no-triton-kernels"]',
    '{"allowed_rules": [',
])
def test_a_manifest_edited_by_hand_is_an_error_that_says_where(tmp_path: Path, manifest: str) -> None:
    tree = _tree_with_manifest(tmp_path, manifest)
    with pytest.raises(PatcherError) as raised:
        check_path(tree, POLICY)
    error = raised.value
    assert (error.message, error.where, error.hint) == (
        "allowed_rules is unreadable", "patcher-manifest.json",
        "was the manifest edited by hand? re-run 'patcher apply VENDOR'")
    assert (tree / "patcher-manifest.json").read_text() == manifest  # the input is never modified
