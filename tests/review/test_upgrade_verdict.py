"""``patcher upgrade`` gives one verdict, reasons first: exit 0 only when NEW ships as OLD did.

Exit 0 needs every patch to apply (or be already applied) on NEW as on OLD with the same
captures, nothing it relies on changed, the patched NEW to pass the safety rules and the
shipped copies to stay where they were. Anything else is exit 1, with the most serious
reason first and the command to run next at the end. A series broken on both drops is
not "no change"; a target NEW no longer ships is a finding, not bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

from make_upgrade_pairs import make_pair
from tests.fixtures_cli import SERIES, TARGET, patch_of
from tests.fixtures_patches import add_patch, copy_patch_set, insert_step, patch_toml
from tests.fixtures_vendor import SHIPPED

SEVERITIES = ["broken", "unsafe", "review", "warning", "note"]  # most serious first


def broken_series_pair(folder: Path) -> tuple[Path, Path]:
    """Ship the stale, upstream-shaped root copy as paged_attn.py in both drops.

    No patch of the series applies to it (no ``actual_max``, no PyTorch prefill), and it imports
    the Triton ``context_attention_fwd`` unconditionally, so ``check`` fails on both drops.
    """
    old, new = make_pair(folder, "unchanged")
    for tree in (old, new):
        (tree / SHIPPED).write_bytes((tree / "paged_attn.py").read_bytes())
    return old, new


def unshipped_pair(folder: Path) -> tuple[Path, Path]:
    """NEW's install script no longer copies paged_attn.py anywhere."""
    old, new = make_pair(folder, "unchanged")
    script = new / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"cp ./paged_attn.py" not in line))
    return old, new


def _json(cli, old: Path, new: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    result = cli("upgrade", old, new, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


def _severities(report: dict) -> list[str]:
    return [reason["severity"] for reason in report["verdict"]["reasons"]]


def test_a_series_broken_on_both_drops_exits_1_with_the_failures_first(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = broken_series_pair(tmp_path / "pair")
    assert cli("check", new).exit_code == 1  # the drop itself fails the rules
    code, report = _json(cli, old, new)
    assert code == 1
    assert [(patch_of(report, p)["old"], patch_of(report, p)["new"]) for p in SERIES] == [("fails", "fails")] * 3
    severities = _severities(report)
    assert severities[:3] == ["broken"] * 3
    assert severities == sorted(severities, key=SEVERITIES.index)
    assert [r["subject"] for r in report["verdict"]["reasons"][:3]] == [f"patch {p}" for p in SERIES]
    # The rules judged NEW as far as it could be patched (nothing applies), and its errors stay errors.
    assert report["rules"]["new"]["complete"] is False and report["rules"]["new"]["applied"] == 0
    unsafe = [r for r in report["verdict"]["reasons"] if r["severity"] == "unsafe"]
    assert any("no-triton-kernels" in r["text"] and r["text"].endswith("(OLD too)") for r in unsafe)
    assert report["next"] == f"patcher diff --keep-going {new}"

    text = cli("upgrade", old, new)
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"patcher upgrade {old} -> {new}: exit 1: ")
    assert lines[1].startswith("  broken: patch three-tier-decode: fails on NEW: ")
    assert lines[-1] == f"next: patcher diff --keep-going {new}"


def test_the_markdown_opens_with_the_verdict_and_ends_with_the_next_command(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = broken_series_pair(tmp_path / "pair")
    result = cli("upgrade", old, new, "--format", "markdown")
    assert result.exit_code == 1
    text = result.stdout
    verdict = text.index("**Exit 1: not ready to ship.**")
    first_reason = text.index("- **broken** `patch three-tier-decode`: fails on NEW")
    table = text.index("| Patch | Old | New |")
    assert verdict < first_reason < table
    assert text.rstrip("\n").endswith(f"**Next:** `patcher diff --keep-going {new}`")


def test_a_target_new_no_longer_ships_is_a_finding_not_bad_input(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = unshipped_pair(tmp_path / "pair")
    code, report = _json(cli, old, new)
    assert code == 1
    assert [patch_of(report, p)["new"] for p in SERIES] == ["not-shipped"] * 3
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["gone"]) == (SHIPPED, None, True)
    assert shipping["new_problem"].startswith("nothing the image ships lands at")
    first = report["verdict"]["reasons"][0]
    assert (first["severity"], first["subject"]) == ("broken", TARGET)
    assert first["text"].startswith("NEW ships no single file as it: nothing the image ships lands at")
    assert report["next"] == f"patcher inspect {new}"
    text = cli("upgrade", old, new).stdout
    assert f"shipped copy of {TARGET}: NOT SHIPPED by NEW (nothing the image ships lands at" in text


def _change_the_prefill_warning(tree: Path) -> None:
    """Edit a string both prefill patches' scope holds and neither patch matches: they still apply."""
    import ast

    path = tree / SHIPPED
    source = path.read_bytes().decode()
    function = next(n for n in ast.walk(ast.parse(source))
                    if isinstance(n, ast.FunctionDef) and n.name == "_forward_prefix_pytorch")
    [text] = [n.value for n in ast.walk(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)
              and "WARNING" in n.value][:1]
    assert source.count(text) == 1
    path.write_bytes(source.replace(text, text.replace("WARNING", "warning")).encode())


def test_a_scope_two_patches_rely_on_is_diffed_once_and_referred_to(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    _change_the_prefill_warning(new)
    result = cli("upgrade", old, new)
    assert result.exit_code == 1
    text = result.stdout
    header = f"--- a/{SHIPPED} (PagedAttention._forward_prefix_pytorch)"
    assert text.count(header) == 1
    lines = text.splitlines()
    assert lines.count("  scope PagedAttention._forward_prefix_pytorch: changed: see diff 1") == 2
    assert (f"diff 1: scope PagedAttention._forward_prefix_pytorch in {SHIPPED} "
            "(relied on by prefix-pregather, prefix-buffer-reuse)") in text
    markdown = cli("upgrade", old, new, "--format", "markdown").stdout
    assert markdown.count(header) == 1
    _, report = _json(cli, old, new)
    [diff] = report["scope_diffs"]
    assert (diff["number"], diff["scope"], diff["patches"]) == (
        1, "PagedAttention._forward_prefix_pytorch", ["prefix-pregather", "prefix-buffer-reuse"])
    assert [p["new"] for p in report["patches"]] == ["applies"] * 3


def _with_set_e(tree: Path) -> None:
    script = tree / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"set -e\n" + script.read_bytes())


def test_a_rule_warning_new_in_new_needs_review(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    _with_set_e(old)  # OLD stops on a failed copy; NEW, as the vendor ships it, does not
    code, report = _json(cli, old, new)
    assert code == 1
    [warning] = report["rules"]["new_warnings"]
    assert warning["rule"] == "install-fails-loudly" and warning["path"] == "qwen3_6_scripts/patch_ops.sh"
    assert _severities(report) == ["review"]
    assert report["next"] == f"patcher check {new}"


def test_a_rule_warning_gone_from_new_is_a_note_and_exit_0(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    _with_set_e(new)
    code, report = _json(cli, old, new)
    assert code == 0
    assert [w["rule"] for w in report["rules"]["gone_warnings"]] == ["install-fails-loudly"]
    assert _severities(report) == ["note"]
    assert report["next"] == f"patcher apply {new}"


def _patch_set_that_imports_triton(folder: Path) -> Path:
    """The bundled series plus a patch whose code imports the Triton prefill kernel."""
    triton = "from vllm.attention.ops.prefix_prefill import context_attention_fwd"
    return add_patch(copy_patch_set(folder), "import-triton", patch_toml(
        "import-triton", insert_step("before", "return PagedAttention._forward_prefix_pytorch($...ARGS)", triton),
        scope="PagedAttention.forward_prefix", target=TARGET, header=f"applied-when = [{json.dumps(triton)}]",
        description="Import the Triton prefill kernel (a patch the rules must stop)", last_update="2026-12-01"))


def test_the_rules_judge_the_patched_drops_not_the_drops_as_they_are(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    patches = _patch_set_that_imports_triton(tmp_path / "set")
    assert cli("check", new).exit_code == 0  # the drop as it is passes
    code, report = _json(cli, old, new, "--patches", str(patches))
    assert code == 1
    assert [p["new"] for p in report["patches"]] == ["applies"] * 4
    errors = report["rules"]["new"]["errors"]
    assert errors and {e["rule"] for e in errors} == {"no-triton-kernels"}
    assert report["rules"]["new_errors"] == []  # the patched OLD has it too: not new, still failing
    assert _severities(report)[0] == "unsafe"
    assert report["verdict"]["reasons"][0]["text"].endswith("in NEW, patched (OLD too)")


def test_a_rule_error_new_in_the_patched_new_is_unsafe_and_names_the_target_to_patch(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "triton-reenabled")
    code, report = _json(cli, old, new)
    assert code == 1
    assert set(_severities(report)) == {"unsafe"}
    assert all(r["text"].endswith("; in NEW, patched") for r in report["verdict"]["reasons"])
    assert report["next"] == f"patch it out: patcher new ID --target {TARGET}, then patcher test ID"
