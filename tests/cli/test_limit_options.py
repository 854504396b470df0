"""A limit the refusal names can be raised with its option, and the archive then goes through."""

from __future__ import annotations

from tests.fixtures_vendor import FIXTURES


def test_limits_can_be_raised(cli, tiny_patches) -> None:  # type: ignore[no-untyped-def]
    bomb = FIXTURES / "bad" / "bomb_ratio.zip"
    refused = cli("apply", bomb, "-o", "x.tar", "--patches", tiny_patches)
    assert "--max-ratio" in refused.stderr
    assert cli("apply", bomb, "-o", "x.tar", "--patches", tiny_patches, "--max-ratio", "100000").exit_code == 0
