"""Target files as real vendor drops have them: CRLF, BOM, tabs, encodings, or broken."""

from __future__ import annotations

import re

import pytest

from tests.fixtures_vendor import SHIPPED
from tests.fixtures_cli import GOLDEN, tar_files


def _apply_variant(cli, vendor_copy, make_zip, content: bytes):  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).write_bytes(content)
    return cli("apply", make_zip(vendor_copy), "-o", "ctx.tar")


def _shipped(cli) -> bytes:  # type: ignore[no-untyped-def]
    return tar_files(cli.cwd / "ctx.tar")[SHIPPED][1]


def test_crlf_target_keeps_crlf(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    original = (vendor_copy / SHIPPED).read_bytes().replace(b"\n", b"\r\n")
    assert _apply_variant(cli, vendor_copy, make_zip, original).exit_code == 0
    assert _shipped(cli) == GOLDEN.read_bytes().replace(b"\n", b"\r\n")


def test_bom_and_no_final_newline_survive(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    original = b"\xef\xbb\xbf" + (vendor_copy / SHIPPED).read_bytes().rstrip(b"\n")
    assert _apply_variant(cli, vendor_copy, make_zip, original).exit_code == 0
    assert _shipped(cli) == b"\xef\xbb\xbf" + GOLDEN.read_bytes().rstrip(b"\n")


def test_tab_indented_target_is_patched_with_tabs(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    def tabs(line: str) -> str:
        spaces = len(line) - len(line.lstrip(" "))
        return "\t" * (spaces // 4) + " " * (spaces % 4) + line.lstrip(" ")

    original = "\n".join(tabs(line) for line in (vendor_copy / SHIPPED).read_text().split("\n"))
    assert _apply_variant(cli, vendor_copy, make_zip, original.encode()).exit_code == 0
    patched = _shipped(cli).decode()
    assert "\n\t\tuse_v2 = actual_max > 8192" in patched
    expanded = "\n".join(re.sub(r"^\t+", lambda m: "    " * len(m.group()), line) for line in patched.split("\n"))
    assert expanded == GOLDEN.read_text()


def test_latin1_target_with_coding_line(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    text = (vendor_copy / SHIPPED).read_text()
    original = ("# -*- coding: latin-1 -*-\n# Auteur: équipe BI\n" + text).encode("latin-1")
    assert _apply_variant(cli, vendor_copy, make_zip, original).exit_code == 0
    assert _shipped(cli) == ("# -*- coding: latin-1 -*-\n# Auteur: équipe BI\n" + GOLDEN.read_text()).encode("latin-1")


@pytest.mark.parametrize(
    ("content", "message", "broken_drop"),
    [
        (b"s = '\xe9'\n", "cannot be decoded: invalid or missing encoding declaration", False),
        (b"a = 1\nb = 2\nc = 3\ns = '\xe9'\n", "cannot be decoded: line 4: not utf-8", False),
        (b"print 'hello'\n", "line 1: Missing parentheses in call to 'print'", True),
        (b"x = 1\r\ny = 2\nz = 3\r", "would not round-trip byte for byte (lone CR line endings?)", False),
    ],
    ids=["not-utf8", "not-utf8-further-down", "python2", "lone-cr"],
)
def test_unpatchable_target_is_one_clear_error(cli, vendor_copy, make_zip, content: bytes, message: str,  # type: ignore[no-untyped-def]
                                               broken_drop: bool) -> None:
    result = _apply_variant(cli, vendor_copy, make_zip, content)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors and errors[0].startswith(f"error: {SHIPPED}: ")
    assert message in errors[0]
    # Only a syntax error is sent back to the vendor: a decoding or line-ending error names what is wrong itself.
    assert ("the drop itself is broken there" in errors[0]) is broken_drop
    assert "Traceback" not in result.stderr
    assert not (cli.cwd / "ctx.tar").exists()


def test_python2_target_says_python3_cannot_parse_it_either(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    result = _apply_variant(cli, vendor_copy, make_zip, b"x = 1\nprint 'hello'\n")
    assert "line 2: Missing parentheses in call to 'print'" in result.stderr
    assert "it does not parse under Python 3." in result.stderr


def test_mixed_line_endings_keep_each_line_as_it_was(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    lines = (vendor_copy / SHIPPED).read_bytes().split(b"\n")
    half = len(lines) // 4  # CRLF up to here (before the first patched line), LF after
    original = b"\r\n".join(lines[:half]) + b"\r\n" + b"\n".join(lines[half:])
    assert _apply_variant(cli, vendor_copy, make_zip, original).exit_code == 0
    patched = _shipped(cli)
    head = b"\r\n".join(lines[:half]) + b"\r\n"
    assert patched.startswith(head)
    assert patched.replace(b"\r\n", b"\n") == GOLDEN.read_bytes()
    tail = b"\n".join(lines[-40:])  # swap_blocks and copy_blocks: untouched, LF
    assert patched.endswith(tail) and b"\r" not in tail
    # Inserted lines take the file's own newline (libcst: the first line's).
    assert b"_v2_unavailable = False\r\n" in patched
