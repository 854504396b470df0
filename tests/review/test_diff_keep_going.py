"""A patch that does not apply makes diff exit 2, with no diff and a hint that works on that input.

With ``--keep-going`` diff then shows what the other patches change, the failure, and the safety-rule
errors of the input, as text, JSON or Markdown.
"""

from __future__ import annotations

import json
import shutil

from tests.fixtures_cli import broken_drop, run_patcher
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP


def test_a_patch_that_does_not_apply_is_exit_2_and_no_diff(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(vendor_copy / "paged_attn.py", vendor_copy / SHIPPED)  # the upstream-like stale file
    result = cli("diff", make_zip(vendor_copy))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {SHIPPED}: patch three-tier-decode: ")


def test_keep_going_shows_what_the_other_patches_change_then_the_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "no-longer-applies")
    plain = run_patcher("diff", tree)
    assert plain.exit_code == 2 and plain.stdout == ""
    # The hint names a command that works on this very input.
    assert f"'patcher diff --keep-going {tree}'" in plain.stderr
    result = run_patcher("diff", "--keep-going", tree)
    assert result.exit_code == 2
    diff = result.stdout
    assert "#   prefix-pregather" in diff and "#   prefix-buffer-reuse" in diff
    assert "three-tier-decode" not in diff and "use_v2" not in diff
    assert any(line.startswith("+") and "k_grp = (key_cache[grp_ids]" in line for line in diff.splitlines())
    [error] = [line for line in result.stderr.splitlines() if "patch three-tier-decode" in line]
    assert error.startswith(f"error: {SHIPPED}: patch three-tier-decode: step 2 (replace): expected ")
    assert "; closest: lines " in error
    assert error.endswith("statement 2 differs: pattern 'use_v1 = True', code 'use_v1 = actual_max <= 8192'")
    assert "1 patch(es) did not apply" in result.stderr
    assert "--keep-going" not in result.stderr  # no hint that leads back here


def test_the_hint_repeats_the_patch_set_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "no-longer-applies")
    result = run_patcher("diff", tree, "--patches", PATCHES, "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 2
    assert (f"'patcher diff --keep-going {tree} --patches {PATCHES} --set three-tier-decode.small_max=4096'"
            in result.stderr)


def test_keep_going_json_carries_the_diagnostic_as_fields(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "no-longer-applies")
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [p["id"] for p in report["sections"][0]["files"][0]["patches"]] == ["prefix-pregather", "prefix-buffer-reuse"]
    [failure] = report["failed"]
    assert (failure["path"], failure["patch"]) == (SHIPPED, "three-tier-decode")
    diagnostic = failure["diagnostic"]
    assert (diagnostic["kind"], diagnostic["scope"], diagnostic["step"]) == ("step", "PagedAttention.forward_decode", 2)
    closest = diagnostic["closest"]
    assert (closest["statement"], closest["matched"], closest["pattern"], closest["code"]) == (
        2, 1, "use_v1 = True", "use_v1 = actual_max <= 8192")
    lines = (tree / SHIPPED).read_text().splitlines()
    assert lines[closest["first_line"] - 1].strip().startswith("use_v1 = (max_seq_len <= 8192")
    assert lines[closest["last_line"] - 1].strip() == "use_v1 = actual_max <= 8192"
    assert failure["message"].endswith(diagnostic["text"])
    assert all(e["rule"] != "no-triton-kernels" for e in report["rule_errors"])


def test_keep_going_lists_the_safety_rule_errors_of_the_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "triton-reenabled", "no-longer-applies")
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [f["patch"] for f in report["failed"]] == ["three-tier-decode"]
    triton = [e for e in report["rule_errors"] if e["rule"] == "no-triton-kernels"]
    assert triton and all(e["path"] == SHIPPED for e in triton)
    assert any(f"{SHIPPED}:{e['line']}: no-triton-kernels: " in result.stderr for e in triton)


def test_keep_going_markdown_lists_failures_and_rule_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "triton-reenabled", "no-longer-applies")
    result = run_patcher("diff", "--keep-going", "--format", "markdown", tree)
    assert result.exit_code == 2
    text = result.stdout
    failures = text.index("#### Patches that do not apply")
    rules = text.index("#### Safety rule errors in the input")
    assert failures < rules
    assert f"- `{SHIPPED}`: **three-tier-decode**: step 2 (replace)" in text[failures:rules]
    assert "closest: lines " in text[failures:rules]
    assert "no-triton-kernels" in text[rules:]


def test_keep_going_on_a_drop_that_applies_is_the_plain_diff(plain) -> None:  # type: ignore[no-untyped-def]
    result = run_patcher("diff", "--keep-going", VENDOR_ZIP)
    assert result.exit_code == 0
    assert result.stdout_bytes == plain.stdout_bytes
