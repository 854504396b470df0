"""Python nested too deep to parse safely, anywhere in a vendor drop: one line with the file and line, never a crash.

A 1,500-deep bracket in any shipped file once killed ``apply`` and
``check`` with SIGSEGV (exit 139): the python-3.10 rule handed what ``ast``
refused to libcst's native parser. Each command runs in a child process
here, so a crash is a failed assertion, not a lost test run.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from tests.fixtures_hostile_inputs import (
    SHAPES,
    deep_python,
    run_patcher,
    target_line_count,
    vendor_tree,
    with_shipped_file,
    with_target_tail,
)
from tests.fixtures_vendor import SHIPPED

DEEP_FILE = "qwen3_6_scripts/reasoning/deep.py"
RULE_ERROR = "python-3.10: nests deeper than 200 levels (brackets, operators, blocks): " \
             "patcher does not parse it, so no rule can vouch for it"


def test_check_names_a_deep_shipped_file_and_line_instead_of_crashing(tmp_path: Path) -> None:
    tree = with_shipped_file(tmp_path, deep_python("brackets"), DEEP_FILE)
    result = run_patcher("check", tree)
    assert result.returncode == 1, result.stderr
    assert f"error: {DEEP_FILE}:4: {RULE_ERROR}" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("shape", ["brackets", "unary minus", "method chain", "elif chain"])
def test_apply_refuses_a_tree_with_a_deep_shipped_file_and_writes_nothing(tmp_path: Path, shape: str) -> None:
    tree = with_shipped_file(tmp_path, deep_python(shape), DEEP_FILE)
    output = tmp_path / "out.tar.gz"
    result = run_patcher("apply", tree, "-o", output)
    assert result.returncode == 2, result.stderr
    assert f"error: {DEEP_FILE}:" in result.stderr and RULE_ERROR in result.stderr
    assert not output.exists()


def test_a_reviewed_deep_file_ships_unchanged_under_an_override(tmp_path: Path) -> None:
    source = deep_python("brackets")
    tree = with_shipped_file(tmp_path, source, DEEP_FILE)
    output = tmp_path / "out.tar"
    result = run_patcher("apply", tree, "-o", output, "--allow", "python-3.10", "--reason", "generated, reviewed")
    assert result.returncode == 0, result.stderr
    with tarfile.open(output) as archive:
        member = archive.extractfile(DEEP_FILE)
        assert member is not None and member.read() == source.encode()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_deep_target_is_a_patch_failure_naming_its_line(tmp_path: Path, shape: str) -> None:
    tree = vendor_tree(tmp_path)
    start = target_line_count(tree) + 1
    tree = with_target_tail(tmp_path / "deep", deep_python(shape, before=0))
    output = tmp_path / "out.tar.gz"
    result = run_patcher("apply", tree, "-o", output)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    failure = next(line for line in result.stderr.splitlines() if f"error: {SHIPPED}: does not parse:" in line)
    assert "nests deeper than 200 levels (brackets, operators, blocks) at line " in failure
    line = int(failure.split(" at line ")[1].split(" ")[0])
    assert line >= start
    assert not output.exists()


@pytest.mark.parametrize("command", [("diff",), ("upgrade", "OLD"), ("explain", "three-tier-decode", "--in")])
def test_every_command_that_patches_a_target_says_why_it_cannot(tmp_path: Path, command: tuple[str, ...]) -> None:
    old = vendor_tree(tmp_path / "old")
    tree = with_target_tail(tmp_path, deep_python("brackets", before=0))
    args = [old if part == "OLD" else part for part in command]
    result = run_patcher(*args, tree)
    assert result.returncode in (0, 1, 2), result.stderr  # explain reports it; diff and upgrade fail on it
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "nests deeper than 200 levels" in result.stdout + result.stderr


@pytest.mark.parametrize("command", ["verify-sync", "inspect"])
def test_commands_that_do_not_parse_python_are_not_stopped_by_a_deep_target(tmp_path: Path, command: str) -> None:
    tree = with_target_tail(tmp_path, deep_python("brackets", before=0))
    result = run_patcher(command, tree)
    assert result.returncode in (0, 1), result.stderr


def test_a_single_deep_py_file_given_to_check_is_a_rule_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.py"
    path.write_text(deep_python("unary minus"))
    result = run_patcher("check", path)
    assert result.returncode == 1, result.stderr
    assert f"{path}:4: {RULE_ERROR}" in result.stdout


def test_a_deep_file_in_the_rules_forked_child_gives_the_verdict_of_the_parent(tmp_path: Path) -> None:
    # check gives the second half of the shipped files (by size) to a forked child: make
    # the deep file the largest, so the child judges it, and compare with a one-process run.
    source = deep_python("brackets") + "# padding\n" * 20_000
    tree = with_shipped_file(tmp_path, source, "qwen3_6_scripts/zzz_deep.py")
    forked = run_patcher("check", tree)
    # Another live thread keeps the rules in one process (a forked child could inherit a held lock).
    alone = run_patcher("check", tree, python=("import threading, time",
                                               "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()"))
    assert forked.returncode == alone.returncode == 1
    assert forked.stdout == alone.stdout
    assert "qwen3_6_scripts/zzz_deep.py:4: python-3.10: nests deeper than 200 levels" in forked.stdout
