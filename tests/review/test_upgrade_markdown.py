"""``upgrade --format markdown``: the patches' table, their diagnostics and each scope's diff."""

from __future__ import annotations

from make_upgrade_pairs import make_pair


def test_markdown_is_for_the_pull_request(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "no-longer-applies")
    result = cli("upgrade", old, new, "--format", "markdown")
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith(f"### patcher upgrade: `{old}` -> `{new}`\n")
    assert "| `three-tier-decode` | applies | fails | no | `PagedAttention.forward_decode` |" in text
    assert "statement 2 differs: pattern 'use_v1 = True', code 'use_v1 = actual_max <= 8192'" in text
    assert "```diff\n--- a/qwen3_6_scripts/paged_attn.py (PagedAttention.forward_decode)" in text
