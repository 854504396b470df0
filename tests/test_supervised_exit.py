"""A supervised command ends as ``sys.exit`` would end it, without the interpreter's teardown.

The child that runs the command exits with ``os._exit`` once the command
is done (tearing down every module costs tens of milliseconds of every
run): its status, a ``sys.exit("message")``, output still in Python's
buffers and the atexit handlers must come out as they did before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patcher import __version__

from tests.fixtures_vendor import ROOT

_COMMAND = """
import atexit, sys
from pathlib import Path
from patcher.interrupt import run_supervised

def main():
    atexit.register(lambda: Path(sys.argv[1]).write_text("atexit ran"))
    sys.stdout.write("buffered, no newline")  # still in Python's buffer when the command ends
    {end}

run_supervised(main)
"""


@pytest.mark.parametrize("end, status, stderr", [
    ("", 0, ""),
    ("sys.exit(0)", 0, ""),
    ("sys.exit(3)", 3, ""),
    ("sys.exit(None)", 0, ""),
    ("sys.exit(True)", 1, ""),
    ("sys.exit(258)", 2, ""),
    ("sys.exit('error: told as a message')", 1, "error: told as a message\n"),
])
@pytest.mark.skipif(not hasattr(os, "fork"), reason="commands run supervised only where fork exists")
def test_the_child_ends_as_sys_exit_would(tmp_path: Path, end: str, status: int, stderr: str) -> None:
    marker = tmp_path / "atexit"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PATCHER_NO_SUPERVISOR", None)
    done = subprocess.run([sys.executable, "-c", _COMMAND.format(end=end), str(marker)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (status, "buffered, no newline", stderr)
    assert marker.read_text() == "atexit ran"


def test_unsupervised_a_profiler_still_writes_its_figures(tmp_path: Path) -> None:
    # PATCHER_NO_SUPERVISOR=1 is for profiling: a profiler writes its figures after the program returns.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATCHER_NO_SUPERVISOR": "1"}
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "figures"), "-m", "patcher",
                           "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout) == (0, f"patcher {__version__}\n")
    assert (tmp_path / "figures").stat().st_size > 0
