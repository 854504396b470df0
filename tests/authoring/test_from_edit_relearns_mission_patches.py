"""The three mission patches, removed and learned back from the vendor file and apply's output, ship the same bytes.

``mission_stages`` runs the hand-written series one patch at a time on the
shipped ``paged_attn.py`` (apply's own runner, in process). From each
stage and the next, ``new --from-edit`` learns one patch; the learned
series, in place of the hand-written one, gives the same patched file
byte for byte (the golden copy apply must write), is "already applied" on
it, and ``patcher apply`` with it writes the same context file. The
learned patches say what the hand-written ones say where it matters: the
decode patch requires ``actual_max`` and carries the V1 and V2 argument
lists through.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patcher.patchset import load_patch_set
from patcher.patchset.runner import Status, patch_source

from tests.fixtures_edits import MISSION_IDS, learned_mission, mission_stages
from tests.fixtures_patches import PATCHED, write_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

IDS = MISSION_IDS


@pytest.fixture
def relearned() -> dict[str, str]:
    """The three patches learned from consecutive stages of the hand-written series, as TOML."""
    return {patch_id: text for patch_id, (_, _, text) in zip(IDS, learned_mission())}


def test_the_learned_series_gives_the_hand_written_series_bytes(relearned: dict[str, str], tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path, {f"{i}.toml": relearned[i] for i in IDS})
    patches = load_patch_set(folder).patches
    stages = mission_stages()
    result = patch_source(SHIPPED, stages[0], patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3, [o.message for o in result.outcomes]
    assert result.patched == stages[-1] == PATCHED.read_bytes()
    again = patch_source(SHIPPED, result.patched, patches)
    assert [o.status for o in again.outcomes] == [Status.ALREADY_APPLIED] * 3


def test_apply_with_the_learned_series_writes_what_the_hand_written_one_writes(
        relearned: dict[str, str], cli: Any, tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "learned", {f"{i}.toml": relearned[i] for i in IDS})
    assert cli("apply", VENDOR_ZIP, "-o", tmp_path / "mine", "--patches", folder).exit_code == 0
    assert cli("apply", VENDOR_ZIP, "-o", tmp_path / "theirs").exit_code == 0
    assert (tmp_path / "mine" / SHIPPED).read_bytes() == (tmp_path / "theirs" / SHIPPED).read_bytes()
    assert (tmp_path / "mine" / "paged_attn.py").read_bytes() == (tmp_path / "theirs" / "paged_attn.py").read_bytes()


def test_the_learned_decode_patch_requires_actual_max_and_carries_the_vendor_arguments(
        relearned: dict[str, str]) -> None:
    text = relearned["decode-relearned"]
    assert 'requires = [\n    "actual_max = $_",\n]' in text
    assert "ops.paged_attention_v1($...PAGED_ATTENTION_V1_ARGS)" in text
    assert "ops.paged_attention_v2($...PAGED_ATTENTION_V2_ARGS)" in text
    # The class attribute goes in its own scope, as in the hand-written patch.
    assert '{ scope = "PagedAttention", pattern = "_v2_unavailable = False" }' in text


def test_the_learned_buffer_patch_writes_each_update_once_for_both_phases(relearned: dict[str, str]) -> None:
    # The same online-softmax edit in phase 1 and phase 2: one step each, expecting two matches.
    assert relearned["buffers-relearned"].count("expect = 2") == 2
