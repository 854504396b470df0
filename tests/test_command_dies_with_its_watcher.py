"""A supervised command does not outlive its watcher.

The ``patcher`` process only watches the forked child that runs the
command. If the watcher itself is killed (``kill -9``, an OOM kill, a CI
runner tearing down the job) it can clean nothing up, so on Linux the child
asks the kernel (``PR_SET_PDEATHSIG``) to kill it when the watcher dies:
otherwise it would go on running, holding the terminal's output and writing
its output after the user saw the run end.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys

import pytest

from tests.fixtures_vendor import ROOT

# The command says which process runs it, then waits for input that never comes.
_COMMAND = """
import os, sys
from patcher.interrupt import run_supervised

def main():
    print(os.getpid(), flush=True)
    sys.stdin.read()

run_supervised(main)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "fork"),
                    reason="the kernel ends a child with its parent on Linux")
def test_the_command_is_killed_when_its_watcher_is_killed() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PATCHER_NO_SUPERVISOR", None)
    watcher = subprocess.Popen([sys.executable, "-c", _COMMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    assert watcher.stdout is not None and watcher.stdin is not None
    command = int(watcher.stdout.readline())
    gone = False
    try:
        assert command != watcher.pid  # the command runs in a child of its own
        watcher.kill()
        watcher.wait()
        # Only the command still holds the pipe's write end: end of file means it is gone.
        # (The limit only stops a broken run from hanging the suite.)
        readable, _, _ = select.select([watcher.stdout], [], [], 60)
        gone = bool(readable) and watcher.stdout.read() == b""
        assert gone, "the command outlived its watcher"
    finally:
        if not gone:  # end what this test started
            with contextlib.suppress(ProcessLookupError):
                os.kill(command, signal.SIGKILL)
        watcher.stdin.close()
        watcher.stdout.close()
