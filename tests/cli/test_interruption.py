"""Ctrl-C or SIGTERM while apply writes is exit 130 and one line, with nothing written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_vendor import ROOT


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python keeps an
    # ignored SIGINT ignored: give the child the Ctrl-C a terminal would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_apply_mid_write_leaves_no_output(tmp_path: Path, vendor_zip: Path, signum: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    before = vendor_zip.read_bytes()
    # The writer's test hook (PATCHER_TEST_WRITE_STARTED) writes to this pipe
    # once content is in the temporary, then waits for the signal: no race.
    started, started_w = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "patcher", "apply", str(vendor_zip), "-o", "ctx.tar.gz", "--patches", str(ROOT / "patches")],
        cwd=work, stderr=subprocess.PIPE, pass_fds=[started_w], preexec_fn=_default_sigint,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PATCHER_TEST_WRITE_STARTED": f"/dev/fd/{started_w}"},
    )
    os.close(started_w)
    with os.fdopen(started, "rb") as pipe:
        announced = pipe.read(1)  # b"" if the child exits without writing
    assert announced, process.communicate(timeout=60)[1]
    assert [p.name.endswith(".tmp") for p in work.iterdir()] == [True]  # really mid-write
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr == b"error: interrupted; nothing was written\n"
    assert list(work.iterdir()) == []
    assert vendor_zip.read_bytes() == before
