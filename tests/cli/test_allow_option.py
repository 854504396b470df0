"""``--allow RULE`` needs a rule the policy declares and a non-empty ``--reason`` of its own: otherwise one error line,
exit 2, nothing written."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, message", [
    (["--allow", "no-triton-prefill"], "error: 1 --allow but 0 --reason"),
    (["--allow", "no-triton-prefil", "--reason", "x"], "did you mean 'no-triton-prefill'?"),
    (["--allow", "python-3.10", "--reason", " "], "the --reason is empty"),
])
def test_allow_needs_a_known_rule_and_a_reason(cli, vendor_zip, args, message) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("error: ")
    assert not (cli.cwd / "ctx.tar.gz").exists()
