"""apply keeps an existing output and says to pass --force; with --force it replaces it."""

from __future__ import annotations


def test_existing_output_is_kept_without_force(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    (cli.cwd / "ctx.tar.gz").write_bytes(b"old")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    assert "--force" in result.stderr
    assert (cli.cwd / "ctx.tar.gz").read_bytes() == b"old"
    assert cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--force").exit_code == 0
    assert (cli.cwd / "ctx.tar.gz").read_bytes() != b"old"
