"""``patcher --help``: every command listed once, by name, each with a one-line summary."""

from __future__ import annotations

from typing import Any

COMMANDS = ["apply", "diff", "inspect", "verify-sync", "check", "verify-numerics", "upgrade", "test", "new",
            "explain"]


def _command_rows(help_text: str) -> list[tuple[str, str]]:
    section = help_text.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    return [(line.split(None, 1) + [""])[:2] for line in section.splitlines()]  # type: ignore[misc]


def test_help_lists_every_command_with_its_summary(cli: Any) -> None:
    result = cli("--help", terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = _command_rows(result.stdout)
    assert [name for name, _ in rows] == sorted(COMMANDS)
    for name, summary in rows:
        # A summary is a sentence of its own: not empty, and not cut short by the terminal's width.
        assert summary.endswith(".") and len(summary.split()) >= 6, (name, summary)
    assert dict(rows)["apply"] == "Patch a vendor zip and pack a deterministic Docker build context."


def test_short_help_option_is_the_same_as_help(cli: Any) -> None:
    assert cli("-h", terminal_width=200).stdout == cli("--help", terminal_width=200).stdout
