"""The diff is coloured only with --color or on a terminal, and the colours are all it adds."""

from __future__ import annotations


def test_colour_only_when_asked_or_on_a_terminal(cli, vendor_zip, plain) -> None:  # type: ignore[no-untyped-def]
    assert b"\x1b[" not in plain.stdout_bytes  # CliRunner's stdout is no terminal
    coloured = cli("diff", "--color", vendor_zip).stdout_bytes
    assert b"\x1b[32m+" in coloured and b"\x1b[31m-" in coloured and b"\x1b[33m# " in coloured
    assert coloured.replace(b"\x1b[m", b"").replace(b"\x1b[32m", b"").replace(b"\x1b[31m", b"").replace(
        b"\x1b[36m", b"").replace(b"\x1b[33m", b"").replace(b"\x1b[1m", b"") == plain.stdout_bytes
