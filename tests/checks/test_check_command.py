"""``patcher check`` passes everything ``apply`` writes, in every output format, and judges one Python file on its own."""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

GOLDEN = ROOT / "tests" / "golden" / "paged_attn.patched.py"


@pytest.mark.parametrize("suffix", ["ctx.tar.gz", "ctx.zip", "ctx"])
def test_check_passes_what_apply_writes_in_every_format(cli, vendor_zip, suffix) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", suffix).exit_code == 0
    result = cli("check", cli.cwd / suffix)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert not any(line.startswith("error: ") for line in result.stdout.splitlines())
    assert "passes: 0 error(s)" in result.stderr


def test_one_python_file_is_checked_on_its_own(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("check", GOLDEN).exit_code == 0
    assert cli("check", VENDOR_TREE / SHIPPED).exit_code == 0
    without_override = tmp_path / "paged_attn.py"
    without_override.write_bytes((VENDOR_TREE / SHIPPED).read_bytes().replace(b"use_v1 = True", b"pass"))
    assert cli("check", without_override).exit_code == 1
    newer = tmp_path / "newer.py"
    newer.write_text("x = 1\ntype Vector = list[float]\n")
    result = cli("check", newer)
    assert result.exit_code == 1
    assert result.stdout.startswith(f"error: {newer}:2: python-3.10: uses a `type` alias statement")
