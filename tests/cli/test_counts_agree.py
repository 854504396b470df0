"""Counts and messages agree, and every hint names a command that works on that very input.

A target that does not parse fails each of its patches, with its line, in
the list, the summary and "nothing written"; diff --keep-going counts them
the same. The command a hint names is run here, on the same input (a
.tar.gz as well as a folder), and must do what the hint says. verify-sync
names apply only where apply would write, and otherwise says why not.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.fixtures_cli import SERIES, broken_drop
from tests.fixtures_patches import patch_toml, replace_step, write_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE


def _unparsable(root: Path) -> tuple[Path, int]:
    """The vendor tree with a function that does not parse appended to the shipped copy; its line."""
    drop = shutil.copytree(VENDOR_TREE, root)
    shipped = drop / SHIPPED
    text = shipped.read_text()
    shipped.write_text(text + "def broken(:\n    pass\n")
    return drop, len(text.splitlines()) + 1


def _hinted(line: str, command: str) -> list[str]:
    """The arguments of the first 'patcher COMMAND ...' a message names."""
    found = re.search(rf"'patcher {command} ([^']*)'", line)
    assert found, line
    return shlex.split(found.group(1))


def test_a_target_that_does_not_parse_fails_each_of_its_patches_with_its_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop, line = _unparsable(tmp_path / "drop")
    result = cli("apply", drop, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert [row.split()[:2] for row in lines if row.startswith("  ")] == [["failed", patch] for patch in SERIES]
    assert all(row.endswith(f"(not run: the file does not parse, line {line})") for row in lines if row.startswith("  "))
    assert "0 applied, 0 already applied, 3 failed" in lines
    assert "nothing written: 3 patch failure(s) and 1 safety rule error(s) in the input as it is" in lines
    [error] = [row for row in lines if row.startswith(f"error: {SHIPPED}: does not parse: ")]
    assert error.startswith(f"error: {SHIPPED}: does not parse: line {line}: invalid syntax; ")
    # The hint's command shows that very line, on that very input.
    check = cli("check", *_hinted(error, "check"))
    assert check.exit_code == 1
    assert f"error: {SHIPPED}:{line}: python-3.10: does not parse: invalid syntax" in check.stdout.splitlines()[0]


def test_diff_keep_going_counts_the_patches_of_a_target_that_does_not_parse(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop, line = _unparsable(tmp_path / "drop")
    result = cli("diff", "--keep-going", drop, "--format", "json")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "3 patch(es) did not apply; the diff above leaves them out "
        "(fix the line named above in the 1 target(s) that do not parse)")
    [failed] = json.loads(result.stdout)["failed"]
    assert failed["patch"] is None and failed["detail"].startswith(f"line {line}: invalid syntax")


def _tar_gz(folder: Path, name: str) -> Path:
    path = folder.parent / name
    with tarfile.open(path, "w:gz") as archive:
        archive.add(folder, arcname=".")
    return path


@pytest.mark.parametrize("packed", [False, True], ids=["folder", "tar.gz"])
def test_the_hint_of_a_failing_patch_runs_on_the_same_input(cli, tmp_path: Path, packed: bool) -> None:  # type: ignore[no-untyped-def]
    drop = broken_drop(tmp_path, "no-longer-applies")
    given = _tar_gz(drop, "drop.tar.gz") if packed else drop
    result = cli("apply", given, "-o", "ctx.tar.gz", "--set", "prefix-pregather.max_gather_tokens=4096")
    assert result.exit_code == 2
    [error] = [row for row in result.stderr.splitlines() if "patch three-tier-decode" in row]
    args = _hinted(error, "diff --keep-going")
    assert args == [str(given), "--set", "prefix-pregather.max_gather_tokens=4096"]
    shown = cli("diff", "--keep-going", *args)
    assert shown.exit_code == 2 and "closest: lines " in shown.stderr
    assert "+                    max_gather_tokens = 4096" in shown.stdout  # the other patches, with the same --set


def _sync_summary(result) -> str:  # type: ignore[no-untyped-def]
    return result.stderr.splitlines()[-1]


@pytest.mark.parametrize("packed", [False, True], ids=["folder", "tar.gz"])
def test_verify_sync_names_apply_where_apply_re_syncs(cli, tmp_path: Path, packed: bool) -> None:  # type: ignore[no-untyped-def]
    drop = shutil.copytree(VENDOR_TREE, tmp_path / "drop")  # the stale root paged_attn.py has drifted
    given = _tar_gz(drop, "drop.tar.gz") if packed else drop
    result = cli("verify-sync", given)
    assert result.exit_code == 1
    summary = _sync_summary(result)
    assert summary == (f"1 of 1 mirror group drifted: 'patcher apply {given}' re-syncs them, "
                       "or copy the shipped file over each stale copy")
    assert cli("apply", *_hinted(summary, "apply"), "-o", "synced").exit_code == 0
    assert cli("verify-sync", "synced").exit_code == 0


def test_verify_sync_says_why_apply_would_not_re_sync_a_drop_it_fails_on(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop = broken_drop(tmp_path, "no-longer-applies")
    summary = _sync_summary(cli("verify-sync", drop))
    assert summary == (f"1 of 1 mirror group drifted: 'patcher apply {drop}' would write nothing "
                       f"(1 patch(es) do not apply; see 'patcher diff --keep-going {drop}'); "
                       "copy the shipped file over each stale copy")
    assert cli("apply", *_hinted(summary, "apply"), "-o", "out").exit_code == 2
    shown = cli("diff", "--keep-going", *_hinted(summary, "diff --keep-going"))
    assert shown.exit_code == 2 and "patch three-tier-decode" in shown.stderr


def test_verify_sync_sends_a_drop_with_a_rule_error_to_check(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop = broken_drop(tmp_path, "triton-reenabled")
    summary = _sync_summary(cli("verify-sync", drop))
    assert re.fullmatch(rf"1 of 1 mirror group drifted: 'patcher apply {drop}' would write nothing "
                        rf"\(\d+ safety rule error\(s\); see 'patcher check {drop}'\); "
                        "copy the shipped file over each stale copy", summary), summary
    assert cli("check", *_hinted(summary, "check")).exit_code == 1


def test_verify_sync_does_not_name_apply_for_copies_only_its_configuration_declares(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop = shutil.copytree(VENDOR_TREE, tmp_path / "drop")
    (drop / "paged_attn.py").write_bytes((drop / SHIPPED).read_bytes())  # apply's group is in sync
    (drop / "sequence.py").write_text("# an older copy\n")
    (drop / "patcher.toml").write_text('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\n'
                                       'copies = ["sequence.py"]\n')
    result = cli("verify-sync", drop)
    assert result.exit_code == 1
    assert _sync_summary(result) == "1 of 2 mirror groups drifted: copy the shipped file over each stale copy"


# A patch that makes the V2 kernel live: the drop is clean, the build apply would write is not.
V2_LIVE = patch_toml("v2-on", replace_step("use_v1 = True", "use_v1 = False"), scope="PagedAttention.forward_decode",
                     target="vllm/attention/ops/paged_attn.py", header='applied-when = ["use_v1 = False"]')


def _drifted(tmp_path: Path) -> Path:
    return shutil.copytree(VENDOR_TREE, tmp_path / "drop")  # the stale root paged_attn.py has drifted


def test_verify_sync_judges_apply_with_the_patch_set_it_is_given(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    drop = _drifted(tmp_path)
    team = write_patch_set(tmp_path / "team", {"v2-on.toml": V2_LIVE})
    summary = _sync_summary(cli("verify-sync", drop, "--patches", team))
    given = f"{drop} --patches {team}"
    assert re.fullmatch(rf"1 of 1 mirror group drifted: 'patcher apply {given}' would write nothing "
                        rf"\(\d+ safety rule error\(s\); see 'patcher check {given}'\); "
                        "copy the shipped file over each stale copy", summary), summary


def test_verify_sync_says_apply_stops_where_it_would(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # verify-sync reads no safety policy; apply stops at one it cannot read.
    drop = _drifted(tmp_path)
    team = write_patch_set(tmp_path / "team", {"v2-on.toml": V2_LIVE})
    (team / "policy.toml").write_text("[rules\n")
    result = cli("verify-sync", drop, "--patches", team)
    assert result.exit_code == 1, result.stderr
    summary = _sync_summary(result)
    assert summary.startswith(f"1 of 1 mirror group drifted: 'patcher apply {drop} --patches {team}' would write "
                              f"nothing (it stops: {team / 'policy.toml'}: "), summary
    assert summary.endswith("; copy the shipped file over each stale copy"), summary
