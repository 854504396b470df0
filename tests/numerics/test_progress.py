"""verify-numerics' progress: a bar counting cases on a terminal, nothing on stderr otherwise, the report unchanged."""

from __future__ import annotations

import io
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from patcher.cli import progress  # noqa: E402
from patcher.cli import verify_numerics  # noqa: E402
from patcher.numerics.compare import compare_sources  # noqa: E402

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE  # noqa: E402


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_counts_every_comparison_once_up_to_the_total() -> None:
    calls: list[tuple[int, int]] = []
    result = compare_sources(VENDOR_SOURCE, PATCHED.read_bytes(), progress=lambda done, total: calls.append((done, total)))
    total = len(result.comparisons)
    assert calls == [(done, total) for done in range(1, total + 1)]


def test_a_bar_of_cases_on_a_terminal_nothing_elsewhere_and_the_same_report(cli, vendor_zip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    plain = cli("verify-numerics", vendor_zip)  # stderr is not a terminal here
    assert plain.exit_code == 0
    assert plain.stderr == ""

    terminal = Terminal()
    bars: list[progress.ProgressBar] = []

    def on_terminal(label: str, **options: Any) -> progress.ProgressBar:
        # The command's own bar, drawn on a terminal from the first case rather than after a second.
        bars.append(progress.ProgressBar(label, stream=terminal, delay=0, **options))
        return bars[-1]

    monkeypatch.setattr(verify_numerics, "ProgressBar", on_terminal)
    result = cli("verify-numerics", vendor_zip)
    assert result.exit_code == 0, result.stdout + result.stderr
    drawn = terminal.getvalue()
    assert len(bars) == 1 and bars[0].enabled
    assert drawn.startswith("\rverifying numerics [")
    assert "  1/158 cases" in drawn
    assert drawn.endswith("[##############################] 100%  158/158 cases\r\x1b[K")
    assert result.stdout == plain.stdout  # the bar never reaches the report
