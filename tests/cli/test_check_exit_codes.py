"""``patcher check``'s exit codes: 0 without errors (also when ``--allow`` overrides them), 1 on a safety rule error,
2 on bad input (one ``error:`` line); ``--help`` documents them."""

from __future__ import annotations

from tests.fixtures_rules import edit
from tests.fixtures_vendor import SHIPPED


def test_check_exits_1_on_an_error_and_0_when_allow_overrides_it(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, "use_v1 = True", "pass")
    source = make_zip(vendor_copy)
    assert cli("check", source).exit_code == 1
    result = cli("check", source, "--allow", "v2-needs-fallback", "--reason", "V2 is stubbed in this image")
    assert result.exit_code == 0
    assert "allowed: " in result.stdout


def test_check_bad_input_is_one_line_and_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", tmp_path / "missing.zip")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_check_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", "--help")
    text = " ".join(result.stdout.split())
    assert "0 no error (warnings are printed but do not fail); 1 a safety rule error" in text
    assert "--format [text|json]" in text
