"""The pre-commit hook patcher-verify-sync runs ``patcher verify-sync .`` in the vendor repository."""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import ROOT


def test_pre_commit_hook_runs_verify_sync(cli) -> None:  # type: ignore[no-untyped-def]
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "patcher-verify-sync"
    assert (hook["language"], hook["pass_filenames"]) == ("python", False)
    program, command = hook["entry"].split()
    assert program == "patcher" and command == "verify-sync" and hook["args"] == ["."]
    # pre-commit runs 'patcher verify-sync .' in the vendor repository: here, a scratch folder.
    assert cli(command, *hook["args"]).stderr.startswith("error: .: no Dockerfile")
