"""A patch that still applies but captures other code than before needs review.

upgrade shows what it captured before and after.
"""

from __future__ import annotations

import ast

from tests.fixtures_cli import SERIES, assert_nothing_around, assert_unchanged, patch_of, scopes_of, upgrade
from tests.fixtures_vendor import SHIPPED


def test_a_v2_call_that_gained_an_argument_still_applies_but_its_capture_changed(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "v2-gains-argument")
    assert code == 1 and report["needs_review"] is True
    patch = patch_of(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "applies")
    assert patch["captures_changed"] is True and patch["needs_review"] is True
    [capture] = patch["captures"]
    assert (capture["step"], capture["match"], capture["binding"]) == (2, 1, "V2_ARGS")
    [call] = [n for n in ast.walk(ast.parse((tmp_path / "pair" / "old" / SHIPPED).read_text()))
              if isinstance(n, ast.Call) and ast.unparse(n.func) == "ops.paged_attention_v2"]
    assert capture["old"] == ", ".join(ast.unparse(a) for a in call.args)
    assert capture["new"] == capture["old"] + ", fp8_out_scale"
    scopes = scopes_of(patch)
    decode = scopes["PagedAttention.forward_decode"]
    assert decode["changed"] is True
    assert decode["diff"].startswith(f"--- a/{SHIPPED} (PagedAttention.forward_decode)\n"
                                     f"+++ b/{SHIPPED} (PagedAttention.forward_decode)\n@@ -")
    added = [line for line in decode["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(added) == 1 and "fp8_out_scale" in added[0]
    # Only forward_decode changed: the class's own statements did not.
    assert scopes["PagedAttention"] == {"scope": "PagedAttention", "changed": False, "diff": "", "note": ""}
    for patch_id in SERIES[1:]:
        assert_unchanged(patch_of(report, patch_id))
    assert_nothing_around(report)


def test_a_changed_heuristic_is_shown_before_and_after(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "heuristic-differs")
    assert code == 1
    patch = patch_of(report, "three-tier-decode")
    old_heuristic = _heuristic((tmp_path / "pair" / "old" / SHIPPED).read_text())
    assert patch["captures"] == [{
        "step": 2, "match": 1, "binding": "HEURISTIC", "old": old_heuristic,
        "new": "max_seq_len <= 4096 and (max_num_partitions == 1 or num_seqs * num_heads > 512)",
    }]
    assert old_heuristic != patch["captures"][0]["new"]
    text = cli("upgrade", tmp_path / "pair" / "old", tmp_path / "pair" / "new").stdout
    assert "applies, but what it captured changed:" in text
    assert f"before: {old_heuristic}" in text and "after:  max_seq_len <= 4096" in text


def _heuristic(source: str) -> str:
    """The upstream ``use_v1 = <heuristic>`` value, as ``ast.unparse`` writes it."""
    [value] = [ast.unparse(n.value) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assign)
               and [ast.unparse(t) for t in n.targets] == ["use_v1"] and not isinstance(n.value, ast.Constant)]
    return value
