"""``patcher upgrade OLD NEW`` through the CLI, on pairs built by fixtures/make_upgrade_pairs.py.

Each pair is the vendor-shaped fixture (OLD) and the same tree with one
change a new vendor drop might bring (NEW). The JSON is asserted field by
field; the text and Markdown forms carry the same findings.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_vendor import SHIPPED, VENDOR_TREE, VENDOR_ZIP
from make_upgrade_pairs import make_pair, make_tree

SERIES = ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]
TARGET = "vllm/attention/ops/paged_attn.py"
INSTALLED = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"


def _install_line() -> int:
    """The line of patch_ops.sh that copies the shipped paged_attn.py into the image."""
    script = (VENDOR_TREE / "qwen3_6_scripts" / "patch_ops.sh").read_text().splitlines()
    [line] = [n for n, text in enumerate(script, 1) if text.lstrip().startswith("cp ") and text.rstrip().endswith(TARGET)]
    return line


def _upgrade(cli, tmp_path: Path, variant: str, *extra: str) -> tuple[int, dict[str, Any]]:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", variant)
    result = cli("upgrade", old, new, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["old"] == str(old) and report["new"] == str(new)
    assert [p["id"] for p in report["patches"]] == SERIES
    return result.exit_code, report


def _patch(report: dict[str, Any], patch_id: str) -> dict[str, Any]:
    return next(p for p in report["patches"] if p["id"] == patch_id)


def _scopes(patch: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["scope"]: s for s in patch["scopes"]}


def _unchanged(patch: dict[str, Any]) -> None:
    assert (patch["old"], patch["new"]) == ("applies", "applies")
    assert patch["diagnostic"] == "" and patch["closest"] is None
    assert patch["captures_changed"] is False and patch["captures"] == []
    assert all(not s["changed"] and s["diff"] == "" for s in patch["scopes"]), patch["scopes"]


def _nothing_around(report: dict[str, Any]) -> None:
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (SHIPPED, SHIPPED, False)
    assert report["mirrors"] == {"appeared": [], "went": []}
    assert report["rules"] == {"new_errors": [], "fixed": []}


def test_an_unchanged_drop_exits_0_with_every_patch_the_same(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "unchanged")
    assert code == 0
    assert report["needs_review"] is False
    for patch_id in SERIES:
        _unchanged(_patch(report, patch_id))
    assert list(_scopes(_patch(report, "three-tier-decode"))) == ["PagedAttention.forward_decode", "PagedAttention"]
    assert list(_scopes(_patch(report, "prefix-pregather"))) == ["PagedAttention._forward_prefix_pytorch"]
    _nothing_around(report)
    shipping = report["shipping"][TARGET]
    assert shipping["old_installed"] == shipping["new_installed"] == [f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:{_install_line()})"]


def test_comments_line_breaks_and_crlf_inside_patched_scopes_are_no_change(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "reformatted")
    old = (tmp_path / "pair" / "old" / SHIPPED).read_bytes()
    new = (tmp_path / "pair" / "new" / SHIPPED).read_bytes()
    # The pair really differs where the patches look: line endings flipped, the V1 call on one line, comments.
    assert (b"\r\n" in old) != (b"\r\n" in new)
    assert b"# the same call, on one line" in new and b"# context tiles" in new
    assert old.replace(b"\r\n", b"\n") != new.replace(b"\r\n", b"\n")
    assert code == 0, report
    assert report["needs_review"] is False
    for patch_id in SERIES:
        _unchanged(_patch(report, patch_id))
    _nothing_around(report)


def test_a_v2_call_that_gained_an_argument_still_applies_but_its_capture_changed(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "v2-gains-argument")
    assert code == 1 and report["needs_review"] is True
    patch = _patch(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "applies")
    assert patch["captures_changed"] is True and patch["needs_review"] is True
    [capture] = patch["captures"]
    assert (capture["step"], capture["match"], capture["binding"]) == (2, 1, "V2_ARGS")
    [call] = [n for n in ast.walk(ast.parse((tmp_path / "pair" / "old" / SHIPPED).read_text()))
              if isinstance(n, ast.Call) and ast.unparse(n.func) == "ops.paged_attention_v2"]
    assert capture["old"] == ", ".join(ast.unparse(a) for a in call.args)
    assert capture["new"] == capture["old"] + ", fp8_out_scale"
    scopes = _scopes(patch)
    decode = scopes["PagedAttention.forward_decode"]
    assert decode["changed"] is True
    assert decode["diff"].startswith(f"--- a/{SHIPPED} (PagedAttention.forward_decode)\n"
                                     f"+++ b/{SHIPPED} (PagedAttention.forward_decode)\n@@ -")
    added = [line for line in decode["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(added) == 1 and "fp8_out_scale" in added[0]
    # Only forward_decode changed: the class's own statements did not.
    assert scopes["PagedAttention"] == {"scope": "PagedAttention", "changed": False, "diff": "", "note": ""}
    for patch_id in SERIES[1:]:
        _unchanged(_patch(report, patch_id))
    _nothing_around(report)


def test_a_changed_heuristic_is_shown_before_and_after(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "heuristic-differs")
    assert code == 1
    patch = _patch(report, "three-tier-decode")
    old_heuristic = _heuristic((tmp_path / "pair" / "old" / SHIPPED).read_text())
    assert patch["captures"] == [{
        "step": 2, "match": 1, "binding": "HEURISTIC", "old": old_heuristic,
        "new": "max_seq_len <= 4096 and (max_num_partitions == 1 or num_seqs * num_heads > 512)",
    }]
    assert old_heuristic != patch["captures"][0]["new"]
    text = cli("upgrade", tmp_path / "pair" / "old", tmp_path / "pair" / "new").stdout
    assert "applies, but what it captured changed:" in text
    assert f"before: {old_heuristic}" in text and "after:  max_seq_len <= 4096" in text


def test_a_patch_the_vendor_already_applied(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "already-applied")
    assert code == 1
    patch = _patch(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "already-applied")
    assert patch["diagnostic"] == "" and patch["captures_changed"] is False
    assert _scopes(patch)["PagedAttention.forward_decode"]["changed"] is True
    diff = _scopes(patch)["PagedAttention.forward_decode"]["diff"].splitlines()
    assert any(line.startswith("+") and "use_v2 = actual_max > 8192" in line for line in diff)
    for patch_id in SERIES[1:]:
        _unchanged(_patch(report, patch_id))
    # The vendor's V2 call now sits behind a fallback: the rule error it had is gone.
    assert [e["rule"] for e in report["rules"]["fixed"]] in ([], ["v2-needs-fallback"])
    assert report["rules"]["new_errors"] == []


def test_a_patch_that_no_longer_applies_names_the_closest_code(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "no-longer-applies")
    assert code == 1
    patch = _patch(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "fails")
    source = (tmp_path / "pair" / "new" / SHIPPED).read_text()
    first, override = _use_v1_lines(source)
    assert patch["diagnostic"].startswith("step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    assert patch["diagnostic"].endswith(
        f"; closest: lines {first}-{override}, statement 2 differs: pattern 'use_v1 = True', "
        "code 'use_v1 = actual_max <= 8192'")
    closest = patch["closest"]
    assert (closest["kind"], closest["scope"], closest["step"]) == ("step", "PagedAttention.forward_decode", 2)
    assert closest["closest"] == {"first_line": first, "last_line": override, "statement": 2, "inside": "",
                                  "pattern": "use_v1 = True", "code": "use_v1 = actual_max <= 8192",
                                  "matched": 1, "differing_tokens": closest["closest"]["differing_tokens"]}
    assert _scopes(patch)["PagedAttention.forward_decode"]["changed"] is True
    for patch_id in SERIES[1:]:
        _unchanged(_patch(report, patch_id))


def _heuristic(source: str) -> str:
    """The upstream ``use_v1 = <heuristic>`` value, as ``ast.unparse`` writes it."""
    [value] = [ast.unparse(n.value) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assign)
               and [ast.unparse(t) for t in n.targets] == ["use_v1"] and not isinstance(n.value, ast.Constant)]
    return value


def test_a_statement_added_inside_a_branch_is_named_where_it_is(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "v2-branch-grows")
    assert code == 1
    patch = _patch(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "fails")
    tree = ast.parse((tmp_path / "pair" / "new" / SHIPPED).read_text())
    [branch] = [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "use_v1"]
    closest = patch["closest"]["closest"]
    assert (closest["statement"], closest["matched"]) == (3, 2)
    assert closest["inside"] == f"in its else, statement {len(branch.orelse)}"
    assert (closest["pattern"], closest["code"]) == ("", "torch.cuda.synchronize()")
    assert closest["last_line"] == branch.end_lineno
    assert patch["diagnostic"].endswith(
        f"statement 3 differs (in its else, statement {len(branch.orelse)}): "
        "the code goes on with 'torch.cuda.synchronize()'")


def _use_v1_lines(source: str) -> tuple[int, int]:
    """Lines of the two ``use_v1 = ...`` assignments in forward_decode, found with ast."""
    lines = [n.lineno for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "use_v1" for t in n.targets)]
    assert len(lines) == 2
    return lines[0], lines[1]


def test_a_shipped_copy_that_is_another_file_moved(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "ships-another-file")
    assert code == 1
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (
        SHIPPED, "qwen3_6_scripts/paged_attn_bi100.py", True)
    assert shipping["new_installed"] == [f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:{_install_line()})"]
    # The root stale copy no longer shares the shipped copy's name: the group went.
    assert report["mirrors"] == {"appeared": [], "went": [{"shipped": SHIPPED, "mirrors": ["paged_attn.py"]}]}
    # Same code under a new name: no rule finding is new or gone.
    assert report["rules"] == {"new_errors": [], "fixed": []}
    for patch_id in SERIES:
        _unchanged(_patch(report, patch_id))


def test_a_shipped_copy_installed_elsewhere_moved(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "installs-elsewhere")
    assert code == 1
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (SHIPPED, SHIPPED, True)
    assert shipping["new_installed"] == [
        f"/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py (qwen3_6_scripts/patch_ops.sh:{_install_line()})"]
    assert report["mirrors"] == {"appeared": [], "went": []}
    for patch_id in SERIES:
        _unchanged(_patch(report, patch_id))


def test_triton_reenabled_in_new_is_a_new_rule_error(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(cli, tmp_path, "triton-reenabled")
    assert code == 1
    new_errors = report["rules"]["new_errors"]
    triton = [e for e in new_errors if e["rule"] == "no-triton-kernels"]
    assert triton and all(e["path"] == SHIPPED for e in triton)
    assert any("context_attention_fwd" in e["message"] for e in triton)
    assert report["rules"]["fixed"] == []
    # The patches themselves do not care: forward_prefix is none of their scopes.
    for patch_id in SERIES:
        _unchanged(_patch(report, patch_id))


def test_markdown_is_for_the_pull_request(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "no-longer-applies")
    result = cli("upgrade", old, new, "--format", "markdown")
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith(f"### patcher upgrade: `{old}` -> `{new}`\n")
    assert "| `three-tier-decode` | applies | fails | no | `PagedAttention.forward_decode` |" in text
    assert "statement 2 differs: pattern 'use_v1 = True', code 'use_v1 = actual_max <= 8192'" in text
    assert "```diff\n--- a/qwen3_6_scripts/paged_attn.py (PagedAttention.forward_decode)" in text


def test_zip_against_folder_of_the_same_drop_is_no_change(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    new = make_tree(tmp_path / "tree", "reformatted")
    result = cli("upgrade", VENDOR_ZIP, new)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.endswith("result: every patch behaves on NEW as on OLD, and nothing it relies on changed\n")


def test_a_build_context_written_by_apply_is_an_input(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", VENDOR_ZIP, "-o", "ctx").exit_code == 0
    result = cli("upgrade", VENDOR_ZIP, cli.cwd / "ctx", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [(p["old"], p["new"]) for p in report["patches"]] == [("applies", "already-applied")] * 3


def test_a_new_drop_that_does_not_parse_fails_every_patch_and_says_why(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    shipped = new / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"\ndef broken(:\n")
    result = cli("upgrade", old, new, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    for patch in report["patches"]:
        assert (patch["old"], patch["new"]) == ("applies", "fails")
        assert patch["diagnostic"].startswith(f"{SHIPPED} does not parse: ")
        assert all(s["changed"] and s["note"] == "NEW does not parse" for s in patch["scopes"])


@pytest.mark.parametrize("which", ["old", "new"])
def test_a_missing_input_is_one_line_and_exit_2(cli, tmp_path, which) -> None:  # type: ignore[no-untyped-def]
    args = [VENDOR_ZIP, tmp_path / "missing"] if which == "new" else [tmp_path / "missing", VENDOR_ZIP]
    result = cli("upgrade", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "missing" in result.stderr and "Traceback" not in result.stderr


def test_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("upgrade", "--help", terminal_width=200).stdout.split())
    assert "0 every patch behaves on NEW as on OLD" in text
    assert "1 something needs review" in text and "2 bad input" in text


@pytest.mark.parametrize("variant, line", [
    ("installs-elsewhere", f"shipped copy of {TARGET} ({SHIPPED}) is installed elsewhere: {{old}} -> "
                           "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py ({script})"),
    ("ships-another-file", f"shipped copy of {TARGET} moved: {SHIPPED} -> qwen3_6_scripts/paged_attn_bi100.py; "
                           "installed as {old} -> {old}"),
])
def test_the_text_names_where_a_moved_copy_is_installed(cli, tmp_path, variant: str, line: str) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", variant)
    result = cli("upgrade", old, new)
    assert result.exit_code == 1, result.stderr
    script = f"qwen3_6_scripts/patch_ops.sh:{_install_line()}"
    assert line.format(old=f"{INSTALLED} ({script})", script=script) in result.stdout.splitlines()
