"""A drop the series no longer applies to stops apply with exit 2 and one report.

Every patch failure and safety-rule error of the input is listed, with the closest code named;
the input is untouched and nothing is written.
"""

from __future__ import annotations

from tests.fixtures_vendor import SHIPPED


def test_a_missing_anchor_fails_with_exit_2_and_writes_nothing(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    shipped = vendor_copy / SHIPPED
    shipped.write_text(shipped.read_text().replace("        use_v1 = True  # BI-V100: the V2 kernel is not available\n", ""))
    variant = make_zip(vendor_copy)
    before = variant.read_bytes()
    result = cli("apply", variant, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    assert ("error: qwen3_6_scripts/paged_attn.py: patch three-tier-decode: step 2 (replace): "
            "expected 'use_v1 = $HEURISTIC / use_v1 = True") in result.stderr
    assert "in PagedAttention.forward_decode" in result.stderr
    assert "closest: lines " in result.stderr and "statement 2 differs: pattern 'use_v1 = True'" in result.stderr
    assert f"'patcher diff --keep-going {variant}'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (cli.cwd / "ctx.tar.gz").exists()
    assert list(cli.cwd.iterdir()) == []
    assert variant.read_bytes() == before


def test_a_failing_drop_that_reenables_triton_gets_both_errors(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from make_upgrade_pairs import make_tree

    tree = make_tree(tmp_path / "drop", "triton-reenabled", "no-longer-applies")
    shipped = (tree / SHIPPED).read_bytes()
    result = cli("apply", tree, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    pattern = [i for i, line in enumerate(lines) if line.startswith(f"error: {SHIPPED}: patch three-tier-decode: ")]
    triton = [i for i, line in enumerate(lines) if line.startswith(f"error: {SHIPPED}:") and ": no-triton-kernels: " in line]
    assert len(pattern) == 1 and triton
    assert "closest: lines " in lines[pattern[0]]
    assert any("context_attention_fwd" in lines[i] for i in triton)
    written = [i for i, line in enumerate(lines) if line.startswith("nothing written")]
    assert written and written[0] > max(pattern + triton)
    assert "1 patch failure(s)" in lines[written[0]] and "safety rule error(s)" in lines[written[0]]
    assert list(cli.cwd.iterdir()) == []
    assert (tree / SHIPPED).read_bytes() == shipped
