"""A slow command's stage line (``upgrade: patching NEW (2/5)``): only on a terminal, only after a
second, erased before the report."""

from __future__ import annotations

import io

from patcher.cli.progress import StageLine

from tests.cli.conftest import Clock, Terminal


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


def test_a_stage_is_drawn_once_delay_has_passed_and_never_past_the_last_count() -> None:
    stream, clock = Terminal(), Clock()
    line = StageLine("upgrade", 2, stream=stream, clock=clock)
    clock.now = -1.0
    line("reading")
    assert stream.getvalue() == ""
    clock.now = 0.0
    line("patching")
    assert stream.getvalue() == "\r\x1b[Kupgrade: patching (2/2)"
    line("comparing")  # one stage more than announced: the count stays at the last
    assert stream.getvalue().endswith("\r\x1b[Kupgrade: comparing (2/2)")


def test_enabled_outranks_the_stream_and_stderr_is_the_default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    plain = io.StringIO()
    line = StageLine("upgrade", 1, stream=plain, enabled=True, delay=0.0, clock=Clock())
    line("comparing")
    assert plain.getvalue() == "\r\x1b[Kupgrade: comparing (1/1)"
    terminal = Terminal()
    StageLine("upgrade", 1, stream=terminal, enabled=False, delay=0.0, clock=Clock())("comparing")
    assert terminal.getvalue() == ""
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    with StageLine("upgrade", 1, delay=0.0, clock=Clock()) as line:
        line("comparing")
    assert stderr.getvalue() == "\r\x1b[Kupgrade: comparing (1/1)\r\x1b[K"


def test_the_line_is_erased_once_and_only_if_it_was_drawn() -> None:
    stream = Terminal()
    line = StageLine("upgrade", 1, stream=stream, delay=0.0, clock=Clock())
    line.close()
    assert stream.getvalue() == ""
    line("comparing")
    line.close()
    line.close()
    assert stream.getvalue().count("\r\x1b[K") == 2  # the one before the text, and one erase
