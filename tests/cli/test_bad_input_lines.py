"""Bad input is exit 2 and one error line, for every command.

A missing input, a tree without a Dockerfile, a Dockerfile that does not parse.
"""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import VENDOR_ZIP


def test_apply_on_a_missing_input_is_one_clear_line(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", "nope.zip")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_verify_sync_on_a_missing_input_is_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", tmp_path / "nope.zip")
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


@pytest.mark.parametrize("which", ["old", "new"])
def test_upgrade_with_a_missing_input_is_one_line_and_exit_2(cli, tmp_path, which) -> None:  # type: ignore[no-untyped-def]
    args = [VENDOR_ZIP, tmp_path / "missing"] if which == "new" else [tmp_path / "missing", VENDOR_ZIP]
    result = cli("upgrade", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "missing" in result.stderr and "Traceback" not in result.stderr


def test_inspect_without_a_dockerfile_is_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    result = cli("inspect", tmp_path / "empty")
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and result.stdout == ""


@pytest.mark.parametrize("command", ["inspect", "apply", "diff", "verify-sync", "check"])
def test_a_dockerfile_that_does_not_parse_is_exit_2(cli, vendor_copy, command) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text("FROM base\nENV\nCOPY qwen3_6_scripts /workspace/qwen3_6_scripts\n")
    result = cli(command, vendor_copy)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: Dockerfile: cannot be parsed") and "internal error" not in result.stderr
