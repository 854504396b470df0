"""The watcher ends what a killed command left running, whatever the processes of the machine are named.

When the watcher kills its child, the child's own children (the forked
rule checker) are reparented to the watcher, its subreaper, which kills
and reaps each one it finds in /proc. A process name holds any byte, ``)``
among them (``(sd-pam)`` on every systemd machine), and /proc/PID/stat
writes it in parentheses unescaped: the fields are read after the last
``)``, or a name breaks the reading of every other process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patcher.interrupt import _end_orphans

# A child that renames itself, says so, then waits for input that never comes.
_NAMED = """
import ctypes, sys
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(sys.argv[1].encode()), 0, 0, 0)  # PR_SET_NAME
print("named", flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the watcher finds orphans through /proc")
def test_every_orphan_is_killed_and_reaped_whatever_its_name(tmp_path: Path) -> None:
    started = []
    for name in ("rules) (x", "(sd-pam)", "plain"):
        child = subprocess.Popen([sys.executable, "-c", _NAMED, name], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        started.append(child)
        assert child.stdout is not None and child.stdout.readline() == "named\n"  # renamed and waiting
        assert Path(f"/proc/{child.pid}/comm").read_text().strip() == name[:15]
    try:
        _end_orphans()  # here the test's process plays the watcher: its children are the orphans
        for child in started:
            with pytest.raises(ProcessLookupError):  # killed, and reaped: no zombie left
                os.kill(child.pid, 0)
    finally:
        for child in started:
            if child.poll() is None:
                child.kill()
            child.communicate()
