"""What ``patcher diff`` prints where: the diff on stdout, every failure as one ``error:`` line on stderr, the exit code.

Without ``--keep-going`` a patch that does not apply stops the command: its
error line (with a hint that repeats the input and the run's --patches and
--set), then the safety rules' errors on the input as it is, nothing on
stdout, exit 2. With it, the others' diff comes first, then the failures
(closest code, no hint leading back here), the rule errors and a count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patcher.report import violation_line
from tests.fixtures_cli import broken_drop
from tests.fixtures_patches import add_patch, copy_patch_set, patch_toml, replace_step
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP

SUMMARY = "1 patch(es) did not apply; the diff above leaves them out (update each one to the code named as closest)"


@pytest.fixture(scope="module")
def drop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo tree where three-tier-decode no longer applies (its forced 'use_v1 = True' became a length test)."""
    return broken_drop(tmp_path_factory.mktemp("diff-streams"), "no-longer-applies")


def failure_text() -> str:
    return ("qwen3_6_scripts/paged_attn.py: patch three-tier-decode: step 2 (replace): expected 'use_v1 = $HEURISTIC"
            " / use_v1 = True / if use_v1: / ops.paged_attention_v1($...V1_ARGS) / else: / $...V2_SETUP / "
            "ops.paged_attention_v2($...V2_ARGS)' once, found it 0 times in PagedAttention.forward_decode")


def rule_line(drop: Path) -> str:
    """The one rule error of the broken input: its V2 call outside any try."""
    from patcher.checks.inputs import check_path
    from patcher.checks.policy import load_policy

    result = check_path(drop, load_policy(PATCHES / "policy.toml"), targets=("vllm/attention/ops/paged_attn.py",))
    [error] = result.errors
    assert error.rule == "v2-needs-fallback"
    return violation_line(error, result)


def closest(drop: Path) -> str:
    lines = (drop / SHIPPED).read_text().splitlines()
    at = lines.index("        use_v1 = actual_max <= 8192") + 1
    return (f"; closest: lines {at - 1}-{at}, statement 2 differs: pattern 'use_v1 = True', "
            "code 'use_v1 = actual_max <= 8192'")


def test_a_failing_patch_stops_diff_with_its_line_its_hint_and_the_input_rules(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", drop, "--patches", PATCHES, "--set", "three-tier-decode.small_max=4096")
    hint = (f" (see what the other patches still change with 'patcher diff --keep-going {drop} --patches {PATCHES}"
            " --set three-tier-decode.small_max=4096', then update the patch in the patch set)")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [f"error: {failure_text()}{closest(drop)}{hint}", f"error: {rule_line(drop)}"]


def test_keep_going_prints_the_others_diff_then_the_failures_the_rules_and_a_count(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", drop, "--keep-going")
    assert result.exit_code == 2
    assert result.stdout.startswith("# qwen3_6_scripts/paged_attn.py\n#   prefix-pregather ")
    assert "\ndiff --git a/qwen3_6_scripts/paged_attn.py b/qwen3_6_scripts/paged_attn.py\n" in result.stdout
    assert "three-tier-decode" not in result.stdout
    assert result.stderr.splitlines() == [f"error: {failure_text()}{closest(drop)}", f"error: {rule_line(drop)}",
                                          SUMMARY]


def test_keep_going_as_json_lists_the_failures_and_the_rule_errors(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", drop, "--keep-going", "--format", "json")
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    [failure] = document["failed"]
    assert failure["message"] == failure_text() + closest(drop)
    assert (failure["path"], failure["patch"], failure["diagnostic"]["kind"]) == (SHIPPED, "three-tier-decode", "step")
    [rule] = document["rule_errors"]
    line = int(rule_line(drop).split(":")[1])
    assert rule == {"rule": "v2-needs-fallback", "path": SHIPPED, "line": line,
                    "message": "ops.paged_attention_v2(...) is called outside any try, so nothing falls back to "
                               "ops.paged_attention_v1"}
    assert document["sections"][0]["files"][0]["diff"].startswith("diff --git a/qwen3_6_scripts/paged_attn.py")
    assert result.stderr.splitlines() == [f"error: {failure_text()}{closest(drop)}", f"error: {rule_line(drop)}",
                                          SUMMARY]


def test_keep_going_as_markdown_names_the_failures_and_the_rule_errors(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", drop, "--keep-going", "--format", "markdown")
    assert result.exit_code == 2
    text = result.stdout
    assert "#### Patches that do not apply" in text and "#### Safety rule errors in the input" in text
    assert "| `three-tier-decode` | **failed** | - | - |" in text
    assert "```diff\ndiff --git a/qwen3_6_scripts/paged_attn.py" in text
    stat = cli("diff", drop, "--keep-going", "--format", "markdown", "--stat").stdout
    assert "#### Patches that do not apply" in stat and "```diff" not in stat


def test_a_clean_input_as_json_has_no_failures_and_no_rule_errors_and_stat_leaves_out_the_diffs(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", VENDOR_ZIP, "--format", "json")
    document = json.loads(result.stdout)
    assert (result.exit_code, result.stderr) == (0, "")
    assert document["failed"] == [] and document["rule_errors"] == []
    assert document["sections"][0]["files"][0]["diff"].startswith("diff --git a/")
    stat = json.loads(cli("diff", VENDOR_ZIP, "--format", "json", "--stat").stdout)
    assert stat["sections"][0]["files"][0]["diff"] is None and stat["stat"]["files"] == 2


def test_the_unified_diff_goes_to_stdout_coloured_only_when_asked_off_a_terminal(cli) -> None:  # type: ignore[no-untyped-def]
    plain = cli("diff", VENDOR_ZIP)
    assert (plain.exit_code, plain.stderr) == (0, "")
    assert plain.stdout.startswith("# qwen3_6_scripts/paged_attn.py\n#   three-tier-decode ")
    assert "\ndiff --git a/qwen3_6_scripts/paged_attn.py b/qwen3_6_scripts/paged_attn.py\n" in plain.stdout
    assert "\x1b[" not in plain.stdout
    coloured = cli("diff", VENDOR_ZIP, "--color")
    assert "\x1b[" in coloured.stdout


def test_stat_prints_the_summary_instead_of_the_diff(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", VENDOR_ZIP, "--stat")
    assert result.exit_code == 0 and "diff --git" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith(" qwen3_6_scripts/paged_attn.py |") and lines[1].startswith(" paged_attn.py ")
    assert lines[2].startswith(" 2 files changed, ") and len(lines) == 3


def test_an_empty_diff_says_no_changes_on_stderr_and_exit_code_tells_empty_from_not(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", VENDOR_ZIP, "-o", "applied").exit_code == 0
    for args in ((), ("--exit-code",)):
        empty = cli("diff", "applied", *args)
        assert (empty.exit_code, empty.stdout, empty.stderr) == (0, "", "no changes\n"), args
    stat = cli("diff", "applied", "--stat")
    assert (stat.stdout, stat.stderr) == (" 0 files changed, 0 insertions(+), 0 deletions(-)\n", "no changes\n")
    changed = cli("diff", VENDOR_ZIP, "--exit-code")
    assert changed.exit_code == 1 and "\ndiff --git " in changed.stdout and changed.stderr == ""


def test_per_patch_and_base_together_are_a_usage_error(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", VENDOR_ZIP, "--per-patch", "--base", "HEAD")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.endswith("Error: --per-patch and --base cannot be combined\n")


def test_keep_going_counts_a_target_that_does_not_parse_apart_from_the_patches_that_need_updating(
        cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Two kinds of failure in one drop: three-tier-decode no longer matches its target, and the drop's
    # sequence.py (shipped as vllm/sequence.py) does not parse, so the team's patch on it cannot run.
    # The count's advice names both, the second for the patches other than the unparsed target's.
    drop = broken_drop(tmp_path, "no-longer-applies")
    sequence = drop / "qwen3_6_scripts" / "sequence.py"
    sequence.write_text(sequence.read_text() + "def broken(:\n    pass\n")
    patches = add_patch(copy_patch_set(tmp_path / "team"), "sequence-length", patch_toml(
        "sequence-length", replace_step("return len(self.prompt_token_ids) + len(self.output_token_ids)",
                                        "return len(self.prompt_token_ids) + len(self.output_token_ids) + 0"),
        target="vllm/sequence.py", scope="SequenceData.get_len"))
    result = cli("diff", drop, "--keep-going", "--patches", patches)
    assert result.exit_code == 2
    assert "diff --git a/qwen3_6_scripts/paged_attn.py b/qwen3_6_scripts/paged_attn.py" in result.stdout
    lines = result.stderr.splitlines()
    assert any(line.startswith("error: qwen3_6_scripts/sequence.py: does not parse: line ") for line in lines)
    assert lines[-1] == (
        "2 patch(es) did not apply; the diff above leaves them out (fix the line named above in the 1 target(s) "
        "that do not parse; update each other one to the code named as closest)")
