"""``inspect``, ``verify-sync`` and ``check``: the report on stdout, warnings and the summary on stderr, the exit code.

They read the vendor tree and the patch set's targets only (never render a
patch). ``inspect --strict`` fails on a warning or a target that does not
ship; ``verify-sync`` fails when a copy drifted; ``check`` when a rule error stands.
"""

from __future__ import annotations

import json
import shlex

from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

IMAGE = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
SCRIPT = "qwen3_6_scripts/patch_ops.sh"
NO_SET_E = (f"warning: {SCRIPT}:8: if copying the patched {SHIPPED} to {IMAGE} fails, the build goes on (no 'set -e') "
            "and the image silently keeps the vendor's unpatched file; add 'set -e' at the top of the script and drop "
            "what hides the error\n")


def test_inspect_reports_on_stdout_and_warns_on_stderr_strict_makes_a_warning_fail(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", VENDOR_ZIP)
    assert (result.exit_code, result.stderr) == (0, NO_SET_E)
    assert result.stdout.startswith(f"{VENDOR_ZIP.name}: 26 files, 10 shipped\n\nDockerfile\n")
    strict = cli("inspect", VENDOR_ZIP, "--strict")
    assert (strict.exit_code, strict.stdout, strict.stderr) == (1, result.stdout, NO_SET_E)
    data = json.loads(cli("inspect", VENDOR_ZIP, "--format", "json").stdout)
    assert [w["message"] for w in data["warnings"]] == [NO_SET_E[len("warning: "):-1]]


def test_inspect_warns_about_a_target_that_does_not_ship_and_a_line_that_could_change_one(cli, vendor_copy,  # type: ignore[no-untyped-def]
                                                                                          tiny_patches) -> None:
    result = cli("inspect", vendor_copy, "--patches", tiny_patches)
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1].startswith("warning: scripts/tool.py: ")
    assert cli("inspect", vendor_copy, "--patches", tiny_patches, "--strict").exit_code == 1
    script = vendor_copy / SCRIPT
    lines = script.read_text().splitlines()
    at = next(n for n, text in enumerate(lines) if "cp ./paged_attn.py" in text)
    lines.insert(at, 'eval "$CMD"')
    script.write_text("\n".join(lines) + "\n")
    caveat = cli("inspect", vendor_copy)
    assert caveat.stderr.endswith(
        f"warning: vllm/attention/ops/paged_attn.py: the image ships {SHIPPED}, but line {at + 1} of {SCRIPT} "
        "(`eval \"$CMD\"`) was not read: it could change that\n")


def test_inspect_and_verify_sync_build_the_stage_target_names(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text(
        "FROM base AS runtime\nCOPY qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "RUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\nFROM base AS docs\nCOPY README* /docs/\n")
    assert f"  vllm/attention/ops/paged_attn.py <- {SHIPPED}" in cli("inspect", "--target", "runtime",
                                                                   vendor_copy).stdout.splitlines()
    synced = cli("verify-sync", "--target", "runtime", vendor_copy)
    assert synced.exit_code == 1 and f"the image ships {SHIPPED} -> {IMAGE}\n" in synced.stdout


def test_verify_sync_prints_groups_on_stdout_the_summary_on_stderr_and_fails_on_drift(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    drifted = cli("verify-sync", VENDOR_ZIP)
    group = (f"paged_attn.py (245 lines) != {SHIPPED} (541 lines); the image ships {SHIPPED} -> {IMAGE}\n")
    assert (drifted.exit_code, drifted.stdout) == (1, group)
    assert drifted.stderr == (f"1 of 1 mirror group drifted: 'patcher apply {shlex.quote(str(VENDOR_ZIP))}' re-syncs "
                              "them, or copy the shipped file over each stale copy\n")
    with_diff = cli("verify-sync", VENDOR_ZIP, "--diff")
    assert with_diff.stdout.startswith(group + "diff --git a/paged_attn.py b/qwen3_6_scripts/paged_attn.py\n")
    assert b"-from dataclasses import dataclass\r\n" in with_diff.stdout_bytes  # the stale copy's CRLFs, unchanged
    document = json.loads(cli("verify-sync", VENDOR_ZIP, "--format", "json").stdout)
    assert document["in_sync"] is False and [c["state"] for c in document["groups"][0]["copies"]] == ["drifted"]
    with_diffs = json.loads(cli("verify-sync", VENDOR_ZIP, "--format", "json", "--diff").stdout)
    assert with_diffs["groups"][0]["copies"][0]["diff"].startswith("diff --git a/paged_attn.py")
    assert cli("apply", VENDOR_ZIP, "-o", "ctx").exit_code == 0
    synced = cli("verify-sync", "ctx")
    assert (synced.exit_code, synced.stderr) == (0, "the mirror group is in sync\n")
    assert synced.stdout == f"paged_attn.py == {SHIPPED} (575 lines); the image ships {SHIPPED} -> {IMAGE}\n"


def test_verify_sync_reads_mirror_groups_from_the_config_named(cli, vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "mirrors.toml"
    config.write_text('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\ncopies = ["sequence.py"]\n')
    (vendor_copy / "sequence.py").write_bytes((vendor_copy / "qwen3_6_scripts" / "sequence.py").read_bytes())
    result = cli("verify-sync", vendor_copy, "--config", config)
    assert result.exit_code == 1  # the paged_attn.py group still drifts
    assert any(line.startswith(f"sequence.py == qwen3_6_scripts/sequence.py") for line in result.stdout.splitlines())
    assert cli("verify-sync", vendor_copy, "--config", tmp_path / "missing.toml").exit_code == 2


def test_check_prints_violations_on_stdout_and_its_summary_on_stderr(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    passing = cli("check", VENDOR_ZIP)
    assert passing.exit_code == 0
    assert [line.split(":", 1)[0] for line in passing.stdout.splitlines()] == ["warning", "note"]
    assert passing.stderr == (f"{VENDOR_ZIP}: passes: 0 error(s), 1 warning(s), 0 allowed, 1 note(s), "
                              "in 8 Python file(s) checked\n")
    as_json = json.loads(cli("check", VENDOR_ZIP, "--format", "json").stdout)
    assert (as_json["passed"], as_json["errors"], as_json["warnings"]) == (True, 0, 1)
    (vendor_copy / SHIPPED).write_bytes((vendor_copy / "paged_attn.py").read_bytes())  # imports the Triton kernel
    failing = cli("check", vendor_copy)
    assert failing.exit_code == 1
    assert failing.stdout.startswith(f"error: {SHIPPED}:10: no-triton-kernels: imports context_attention_fwd ")
    assert failing.stderr.startswith(f"{vendor_copy}: fails: 7 error(s), 1 warning(s), 0 allowed, in 8 Python file(s) checked\n")


def test_check_on_one_file_needs_only_the_policy(cli, vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    one = vendor_copy / "paged_attn.py"
    result = cli("check", one, "--patches", tmp_path / "no-such-set")  # no patch set is read for one file
    assert result.exit_code == 1 and result.stderr.startswith(f"{one}: fails: ")
    assert "no such patch set folder" not in result.stderr
