"""Colour follows one rule in every command that colours (``patcher diff``, the only one that does).

``--color`` always colours and ``--no-color`` never does, whatever the
environment. Without either, a non-empty ``NO_COLOR`` (any value, "0"
too, per no-color.org) turns colour off, on a terminal too; an empty one
counts as unset; otherwise colour goes to a terminal only. Checked through
a real pseudo-terminal, in a child process, as a user runs it.
"""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from patcher.cli.options import colour_wanted

from tests.cli.conftest import Terminal
from tests.fixtures_vendor import ROOT, VENDOR_ZIP

ESCAPE = b"\x1b["


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scratch home for the module's runs: the first fills the patch cache, the others read it."""
    return tmp_path_factory.mktemp("colour")


def environment(tmp_path: Path, no_color: str | None) -> dict[str, str]:
    """Return the child's environment: this checkout's code, a private cache and key, NO_COLOR as given."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PATCHER_NO_CACHE", "FORCE_COLOR")}
    env.update(PYTHONPATH=str(ROOT), PATCHER_CACHE_DIR=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path), TERM="xterm")
    if no_color is not None:
        env["NO_COLOR"] = no_color
    return env


def run_on_a_terminal(tmp_path: Path, *args: str, no_color: str | None = None) -> bytes:
    """Run ``patcher ARGS`` with stdout on a pseudo-terminal; return what it wrote there."""
    primary, secondary = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "patcher", *args], stdin=subprocess.DEVNULL, stdout=secondary,
                             stderr=subprocess.PIPE, cwd=tmp_path, env=environment(tmp_path, no_color))
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    _, errors = child.communicate()
    assert child.returncode == 0, errors
    return b"".join(chunks)


def run_into_a_pipe(tmp_path: Path, *args: str, no_color: str | None = None) -> bytes:
    done = subprocess.run([sys.executable, "-m", "patcher", *args], capture_output=True, cwd=tmp_path,
                          env=environment(tmp_path, no_color), check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("flag, no_color, coloured", [
    ((), None, True),
    ((), "", True),
    ((), "1", False),
    ((), "0", False),
    ((), "false", False),
    (("--color",), "1", True),
    (("--no-color",), None, False),
    (("--no-color",), "", False),
])
def test_on_a_terminal_the_flags_then_no_color_decide(home: Path, flag: tuple[str, ...], no_color: str | None,
                                                      coloured: bool) -> None:
    shown = run_on_a_terminal(home, "diff", *flag, str(VENDOR_ZIP), no_color=no_color)
    assert b"diff --git a/qwen3_6_scripts/paged_attn.py" in shown.replace(ESCAPE + b"1m", b"")
    assert (ESCAPE in shown) is coloured


@pytest.mark.parametrize("flag, no_color, coloured", [
    ((), None, False),
    (("--color",), None, True),
    (("--color",), "1", True),
    (("--no-color",), None, False),
])
def test_into_a_pipe_only_color_colours(home: Path, flag: tuple[str, ...], no_color: str | None,
                                        coloured: bool) -> None:
    written = run_into_a_pipe(home, "diff", *flag, str(VENDOR_ZIP), no_color=no_color)
    assert (ESCAPE in written) is coloured


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_formats_for_machines_and_pull_requests_are_never_coloured(home: Path, fmt: str) -> None:
    assert ESCAPE not in run_on_a_terminal(home, "diff", "--color", "--format", fmt, str(VENDOR_ZIP))
    assert ESCAPE not in run_on_a_terminal(home, "diff", "--color", "--stat", str(VENDOR_ZIP))


@pytest.mark.parametrize("choice, no_color, terminal, expected", [
    (True, "1", False, True),
    (False, None, True, False),
    (None, "yes", True, False),
    (None, "", True, True),
    (None, None, True, True),
    (None, None, False, False),
])
def test_one_rule_decides_for_every_command(monkeypatch: pytest.MonkeyPatch, choice: bool | None,
                                            no_color: str | None, terminal: bool, expected: bool) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert colour_wanted(choice, Terminal() if terminal else io.StringIO()) is expected


class NoIsatty:
    """A stream with no isatty at all (a bare writer handed to a command)."""

    def write(self, text: str) -> int:
        return len(text)


class ClosedStream(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize("stream", [NoIsatty(), ClosedStream()], ids=["no isatty", "closed"])
def test_a_stream_that_cannot_say_it_is_a_terminal_is_not_coloured(monkeypatch: pytest.MonkeyPatch,
                                                                    stream: object) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_wanted(None, stream) is False  # type: ignore[arg-type]
    assert colour_wanted(True, stream) is True  # type: ignore[arg-type]
