"""``patcher explain`` shows a patch in words: header, parameters (with ``--set``), each step, and with ``--in`` where it matches.

In a vendor drop it names the shipped file, each step's lines (the shipped
file's, after earlier patches) and captures, whether the patch applies,
and where it does not, the closest code.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from tests.authoring.conftest import decode_lines, shipped_source
from tests.fixtures_patches import edit_file, one_error_line, patch_toml, replace_step, write_patch_set
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE, VENDOR_ZIP


def test_explain_shows_header_parameters_and_steps(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch" in lines
    assert "Last-Update: 2026-11-29" in lines
    assert "  small_max (int, 1..32768) = 8192; default 8192" in lines
    assert "      Longest sequence, in tokens, that always decodes with the V1 kernel." in lines
    assert "  2. replace, in PagedAttention.forward_decode, each run of statements matching (expected once):" in lines
    assert "         use_v1 = $HEURISTIC" in lines
    assert "         use_v2 = actual_max > 8192 and not PagedAttention._v2_unavailable" in lines
    assert "In " not in result.stdout


def test_explain_prints_blank_lines_of_a_step_without_trailing_spaces(cli: Any, tmp_path: Path) -> None:
    # A step's code with a blank line between two statements, as authors space out what they write.
    patches = write_patch_set(tmp_path, {"two-tier-decode.toml": patch_toml("two-tier-decode", replace_step(
        "use_v1 = True", "\nuse_v2 = actual_max > 8192\n\nuse_v1 = not use_v2\n"),
        scope="PagedAttention.forward_decode", target="vllm/attention/ops/paged_attn.py")})
    result = cli("explain", "two-tier-decode", "--patches", patches)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[lines.index("     with:"):] == ["     with:", "         use_v2 = actual_max > 8192", "",
                                                 "         use_v1 = not use_v2"]
    assert [line for line in lines if line != line.rstrip()] == []


def test_explain_set_changes_the_shown_value_and_the_rendered_code(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  small_max (int, 1..32768) = 4096  (set); default 8192" in lines
    assert "         use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in lines
    assert "Applied when: 'use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable'" in lines


def test_explain_in_the_fixture_zip_shows_line_ranges_and_captures(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", VENDOR_ZIP)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    threshold, first, last = decode_lines()
    assert f"In {VENDOR_ZIP}:" in lines
    assert f"  shipped file: {SHIPPED}" in lines
    assert "  this patch: applies" in lines
    assert f"  step 1, pattern: line {threshold}" in lines
    assert "      $OLD = 32768" in lines
    assert f"  step 2, pattern: lines {first}-{last}" in lines
    assert ("      $HEURISTIC = (max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))"
            in lines)
    v1 = next(line for line in lines if line.startswith("      $...V1_ARGS = "))
    assert v1.endswith("= output, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, "
                       "block_size, max_seq_len, alibi_slopes")
    setup = lines.index(next(line for line in lines if line.startswith("      $...V2_SETUP = ")))
    assert "assert _PARTITION_SIZE % block_size == 0" in lines[setup + 1]


def test_explain_gives_line_numbers_of_the_shipped_file_after_earlier_patches(cli: Any) -> None:
    # prefix-buffer-reuse runs after two patches that add lines above its matches.
    result = cli("explain", "prefix-buffer-reuse", "--patches", PATCHES, "--in", VENDOR_TREE)
    assert result.exit_code == 0, result.output
    shipped = shipped_source().splitlines()
    expected = [number for number, line in enumerate(shipped, 1) if line.strip() == "m_blk = s.amax(dim=-1)"]
    assert len(expected) == 2
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("  step 1, m_blk = ...")] == [
        f"  step 1, m_blk = ...: line {n}" for n in expected]
    assert any("three-tier-decode, prefix-pregather changed it; line numbers are the shipped file's" in line
               for line in lines)


def test_explain_in_an_applied_build_context_says_already_applied(cli: Any, tmp_path: Path) -> None:
    output = tmp_path / "context.tar.gz"
    assert cli("apply", VENDOR_ZIP, "-o", output, "--patches", PATCHES).exit_code == 0
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", output)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  this patch: already applied" in lines
    assert any(line.startswith("  step 2: pattern 'use_v1 = $HEURISTIC") and line.endswith(
        "matches nothing in PagedAttention.forward_decode") for line in lines)


def test_explain_an_unknown_patch_id_or_parameter(cli: Any) -> None:
    line = one_error_line(cli("explain", "prefix-buffer", "--patches", PATCHES))
    assert "no patch 'prefix-buffer' in the series" in line and "did you mean 'prefix-buffer-reuse'?" in line
    line = one_error_line(cli("explain", "three-tier-decode", "--patches", PATCHES, "--set", "three-tier-decode.small=1"))
    assert "has no parameter 'small'" in line


def test_explain_in_a_drop_the_patch_does_not_fit_says_why(cli: Any, vendor_copy: Path) -> None:
    # A later vendor drop without the `use_v1 = True` override: step 2 finds nothing.
    shipped = vendor_copy / SHIPPED
    edit_file(shipped, "        use_v1 = True  # BI-V100: the V2 kernel is not available\n", "")
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", vendor_copy)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    status = next(line for line in lines if line.startswith("  this patch: "))
    assert status.startswith("  this patch: fails: step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    assert "found it 0 times in PagedAttention.forward_decode" in status
    # The next line names the closest code, at the shipped file's lines: the heuristic up to the dispatch's end.
    _, first, last = decode_lines(shipped.read_text(encoding="utf-8"))
    assert lines[lines.index(status) + 1] == (f"  closest: lines {first}-{last}, statement 2 differs: "
                                              "pattern 'use_v1 = True', code 'if use_v1: ...'")
    assert any(line.startswith("  step 1, pattern: line ") for line in lines)
    assert any(line.startswith("  step 2: pattern 'use_v1 = $HEURISTIC") and "matches nothing" in line
               for line in lines)


def test_explain_closest_code_of_a_later_patch_is_at_the_shipped_files_lines(cli: Any, vendor_copy: Path) -> None:
    # prefix-pregather runs after three-tier-decode, which adds lines above it; here its gather has another layout.
    shipped = vendor_copy / SHIPPED
    edit_file(shipped, "k_tile = (key_cache[blk_ids]\n                                  .permute(0, 3, 1, 2, 4)",
              "k_tile = (key_cache[blk_ids]\n                                  .permute(0, 3, 2, 1, 4)")
    tree = ast.parse(shipped.read_text(encoding="utf-8"))
    gather = next(n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                  and getattr(n.targets[0], "id", "") == "k_tile" and "permute(0, 3, 2, 1, 4)" in ast.unparse(n))
    span = f"lines {gather.lineno}-{gather.end_lineno}"
    result = cli("explain", "prefix-pregather", "--patches", PATCHES, "--in", vendor_copy)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    closest = next(line for line in lines if line.startswith("  closest: "))
    assert closest.startswith(f"  closest: {span}, statement 1 differs: pattern 'k_tile = key_cache[blk_ids]"
                              ".permute(0, 3, 1, 2, 4)")
    assert closest.endswith("code 'k_tile = key_cache[blk_ids].permute(0, 3, 2, 1, 4).contiguous()"
                            ".view(-1, num_kv_heads, head_dim)'")
    # What 'diff --keep-going' says about the same drop names the same lines.
    diff = cli("diff", vendor_copy, "--patches", PATCHES, "--keep-going")
    assert f"; closest: {span}, statement 1 differs" in diff.stderr
