"""Each command's --help documents its exit codes (and verify-sync's its configuration)."""

from __future__ import annotations


def test_apply_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", "--help")
    assert "Exit codes: 0 done; 1 a check found a difference; 2 bad input" in " ".join(result.stdout.split())


def test_diff_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("diff", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0" in text and "1 the diff is not empty (--exit-code only)" in text and "3 internal" in text


def test_inspect_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("inspect", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0 done; 1 with --strict, a warning" in text and "3 internal error" in text


def test_upgrade_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("upgrade", "--help", terminal_width=200).stdout.split())
    assert "0 every patch applies (or is already applied) on NEW as on OLD" in text
    assert "the patched NEW passes the safety rules" in text and "a target NEW no longer ships" in text
    assert "1 something needs review" in text and "2 bad input" in text


def test_verify_sync_help_documents_exit_codes_and_configuration(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("verify-sync", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0 every copy is byte-identical" in text and "1 a copy drifted" in text
    assert "[[verify-sync.mirrors]]" in text and "patcher.toml" in text
