"""A slow command's stage line (``upgrade: patching NEW (2/5)``): only on a terminal, only after a
second, erased before the report."""

from __future__ import annotations

import io

from patcher.cli.progress import StageLine


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


STAGES = ["reading what each drop ships", "patching NEW", "patching OLD", "running the safety rules", "comparing"]


def _run(stream: io.StringIO, step: float) -> str:
    clock = Clock()
    with StageLine("upgrade", len(STAGES), stream=stream, clock=clock) as line:
        for stage in STAGES:
            line(stage)
            clock.now += step
        drawn = stream.getvalue()
    return drawn


def test_nothing_is_drawn_off_a_terminal() -> None:
    stream = io.StringIO()
    assert _run(stream, 2.0) == "" and stream.getvalue() == ""


def test_a_quick_run_draws_nothing() -> None:
    stream = Terminal()
    assert _run(stream, 0.1) == "" and stream.getvalue() == ""


def test_a_slow_run_names_each_stage_after_the_first_second_then_erases_the_line() -> None:
    stream = Terminal()
    drawn = _run(stream, 0.6)
    # Stages entered 0.0 and 0.6 s in are not drawn; from 1.2 s on, each one is.
    assert drawn == ("\r\x1b[Kupgrade: patching OLD (3/5)\r\x1b[Kupgrade: running the safety rules (4/5)"
                     "\r\x1b[Kupgrade: comparing (5/5)")
    assert stream.getvalue() == drawn + "\r\x1b[K"
