"""The CLI's progress bar: only on a terminal, only after a second, erased before the report."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from patcher.cli.progress import ProgressBar

from tests.cli.conftest import Clock, Terminal


def test_nothing_is_drawn_when_stderr_is_not_a_terminal() -> None:
    stream, clock = io.StringIO(), Clock()
    with ProgressBar("writing ctx.tar.gz", stream=stream, clock=clock) as bar:
        for done in range(0, 101, 10):
            bar.update(done * 10**6, 100 * 10**6)
            clock.now += 1
    assert stream.getvalue() == ""


def test_a_quick_write_draws_nothing() -> None:
    stream, clock = Terminal(), Clock()
    with ProgressBar("writing ctx.tar.gz", stream=stream, clock=clock) as bar:
        for done in range(0, 101, 10):
            bar.update(done, 100)
            clock.now += 0.05
    assert stream.getvalue() == ""


def test_a_long_write_draws_a_bar_then_erases_it() -> None:
    stream, clock = Terminal(), Clock()
    with ProgressBar("writing ctx.tar.gz", stream=stream, clock=clock) as bar:
        bar.update(0, 80 * 10**6)
        clock.now += 1.5
        bar.update(40 * 10**6, 80 * 10**6)
        clock.now += 0.01
        bar.update(41 * 10**6, 80 * 10**6)  # too soon to redraw
        clock.now += 0.5
        bar.update(80 * 10**6, 80 * 10**6)
        drawn = stream.getvalue()
    assert drawn.count("\r") == 2
    assert "writing ctx.tar.gz [###############...............]  50%  40/80 MB" in drawn
    assert drawn.endswith("100%  80/80 MB")
    assert stream.getvalue() == drawn + "\r\x1b[K"


# Draw from the first byte (no one-second wait), so the test does not depend on how fast apply writes.
# (A wrapper, not the defaults of __init__: those are gone when __init__ is itself wrapped, as under mutmut.)
_DRAW_AT_ONCE = (
    "from patcher.cli.progress import ProgressBar\n"
    "init = ProgressBar.__init__\n"
    "def at_once(self, *args, **kwargs):\n"
    "    init(self, *args, **{**kwargs, 'delay': 0.0})\n"
    "ProgressBar.__init__ = at_once\n"
    "from patcher.cli import main\n"
    "main()\n"
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_apply_on_a_terminal_erases_its_bar_before_the_report(tmp_path: Path, vendor_zip: Path) -> None:
    leader, follower = pty.openpty()
    result = subprocess.run(
        [sys.executable, "-c", _DRAW_AT_ONCE, "apply", str(vendor_zip), "-o", str(tmp_path / "ctx.tar.gz")],
        stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL, check=False,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    stderr = b"".join(chunks)
    assert result.returncode == 0, stderr
    drawn, erase, report = stderr.rpartition(b"\r\x1b[K")
    assert erase, stderr  # the bar was erased...
    assert b"writing ctx.tar.gz [" in drawn  # ...after being drawn on the terminal,
    assert b"wrote " in report and b"[#" not in report and b"\r" not in report.replace(b"\r\n", b"")  # then a clean report


def _drawn_between(bar: ProgressBar, stream: io.StringIO, done: int, total: int) -> str:
    before = len(stream.getvalue())
    bar.update(done, total)
    return stream.getvalue()[before:]


def test_the_bar_appears_once_delay_has_passed_and_redraws_once_refresh_has() -> None:
    # Times exact in binary: the bar starts at -1.0, is due at 0.0, may redraw at 0.1.
    stream, clock = Terminal(), Clock()
    bar = ProgressBar("writing ctx.zip", stream=stream, clock=clock)
    clock.now = -1.0
    assert _drawn_between(bar, stream, 0, 4 * 10**6) == ""
    clock.now = 0.0
    assert _drawn_between(bar, stream, 1 * 10**6, 4 * 10**6) == \
        "\rwriting ctx.zip [#######.......................]  25%  1/4 MB"
    clock.now = 0.0625
    assert _drawn_between(bar, stream, 2 * 10**6, 4 * 10**6) == ""  # too soon
    clock.now = 0.1
    assert _drawn_between(bar, stream, 3 * 10**6, 4 * 10**6) == \
        "\rwriting ctx.zip [######################........]  75%  3/4 MB"
    clock.now = 0.125
    # The last amount is always drawn, however soon: the bar ends full.
    assert _drawn_between(bar, stream, 4 * 10**6, 4 * 10**6) == \
        "\rwriting ctx.zip [##############################] 100%  4/4 MB"


def test_amounts_are_rounded_megabytes_or_the_unit_asked_for() -> None:
    stream, clock = Terminal(), Clock()
    bar = ProgressBar("writing ctx.tar.gz", stream=stream, clock=clock, delay=0.0)
    assert _drawn_between(bar, stream, 1_500_000, 3_000_000) == \
        "\rwriting ctx.tar.gz [###############...............]  50%  2/3 MB"
    cases = ProgressBar("verifying numerics", stream=stream, clock=clock, delay=0.0, unit="cases", scale=1)
    assert _drawn_between(cases, stream, 70, 158) == "\rverifying numerics [#############.................]  44%  70/158 cases"


def test_nothing_to_write_shows_a_full_bar() -> None:
    stream, clock = Terminal(), Clock()
    bar = ProgressBar("writing ctx", stream=stream, clock=clock, delay=0.0)
    assert _drawn_between(bar, stream, 0, 0) == "\rwriting ctx [##############################] 100%  0/0 MB"


def test_enabled_outranks_what_the_stream_is_and_stderr_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    forced = io.StringIO()
    ProgressBar("a", stream=forced, clock=clock, enabled=True, delay=0.0).update(1, 2)
    assert forced.getvalue().startswith("\ra [###")
    terminal = Terminal()
    ProgressBar("b", stream=terminal, clock=clock, enabled=False, delay=0.0).update(1, 2)
    assert terminal.getvalue() == ""
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    with ProgressBar("c", clock=clock, delay=0.0) as bar:
        bar.update(1, 2)
    assert stderr.getvalue().startswith("\rc [###") and stderr.getvalue().endswith("\r\x1b[K")


def test_the_bar_is_erased_once_and_only_if_it_was_drawn() -> None:
    stream, clock = Terminal(), Clock()
    bar = ProgressBar("a", stream=stream, clock=clock, delay=0.0)
    bar.close()
    assert stream.getvalue() == ""
    bar.update(1, 2)
    bar.close()
    bar.close()
    assert stream.getvalue().count("\r\x1b[K") == 1


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


def test_a_stream_that_cannot_say_whether_it_is_a_terminal_gets_no_bar() -> None:
    class Bare:  # no isatty at all
        def write(self, text: str) -> None:
            raise AssertionError("drawn")

    for stream in (Bare(), Closed()):
        bar = ProgressBar("a", stream=stream, clock=Clock(), delay=0.0)  # type: ignore[arg-type]
        assert bar.enabled is False
        bar.update(1, 2)
        bar.close()
