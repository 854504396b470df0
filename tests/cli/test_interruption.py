"""SIGTERM and Ctrl-C stop any command at once: exit 130, one line, no output and no temporary left.

A Python signal handler runs only between bytecodes: while native code
holds the interpreter lock (libcst's parser for seconds on a large
target), it waits. So ``patcher`` runs each command in a child that a
watcher stops: here the child is made to hold SIGINT and SIGTERM blocked
for good at the point a test names (``PATCHER_TEST_HOLD``, as a native
call keeps them waiting), so only the watcher can end it; without one the
run would never end. Each test waits on a pipe for that point, then on the
process: no sleep, no clock (the timeouts only end a broken run).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from patcher.interrupt import HOLD, MESSAGE
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE, build_zip

PATCH_STARTED = "PATCHER_TEST_PATCH_STARTED"
WRITE_STARTED = "PATCHER_TEST_WRITE_STARTED"


def large_drop(folder: Path, helpers: int = 1500) -> Path:
    """The fixture drop with its shipped paged_attn.py grown by HELPERS diagnostic checks (CRLF), as a zip."""
    tree = folder / "tree" / VENDOR_TREE.name
    import shutil

    shutil.copytree(VENDOR_TREE, tree)
    shipped = tree / SHIPPED
    text = shipped.read_text(encoding="utf-8")
    checks = "".join(
        f"\n\ndef _check_{n}(block_tables, num_blocks):\n"
        f"    if block_tables is None or block_tables.numel() == 0:\n"
        f"        return\n"
        f"    high = int(block_tables.max().item())\n"
        f"    if high >= num_blocks:\n"
        f'        raise RuntimeError("[paged_attn pid=%d] block %d of %d" % (os.getpid(), high, num_blocks))\n'
        for n in range(helpers))
    shipped.write_bytes(("import os\n" + text + checks).replace("\r\n", "\n").replace("\n", "\r\n").encode())
    output = folder / "large.zip"
    build_zip(tree, output)
    return output


def _child_of(pid: int) -> int:
    """The process PID forked (the command's child), found through /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                return int(entry)
    raise AssertionError(f"process {pid} has no child")


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python keeps an
    # ignored SIGINT ignored: give the child the Ctrl-C a terminal would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _no_run_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Kill what a failing test left running (a held run never ends by itself)."""
    yield
    for process in _STARTED:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    _STARTED.clear()


_STARTED: list[subprocess.Popen[bytes]] = []


def _start(args: list[str], cwd: Path, hook: str, *, hold: bool) -> subprocess.Popen[bytes]:
    """Start ``python -m patcher ARGS`` (in a session of its own) and return once it reached HOOK's point."""
    started, started_w = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT), hook: f"/dev/fd/{started_w}"}
    env.pop("PATCHER_NO_SUPERVISOR", None)
    if hold:
        env[HOLD] = "1"
    process = subprocess.Popen([sys.executable, "-m", "patcher", *args], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, pass_fds=[started_w], preexec_fn=_default_sigint, env=env,
                               start_new_session=True)
    _STARTED.append(process)
    os.close(started_w)
    with os.fdopen(started, "rb") as pipe:
        announced = pipe.readline()  # b"" if the run ends without getting there
    assert announced, process.communicate(timeout=120)[1]
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_apply_stuck_in_the_parse_of_a_large_target(tmp_path: Path, signum: int) -> None:
    drop = large_drop(tmp_path)
    before = drop.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    process = _start(["apply", str(drop), "-o", str(out / "ctx.tar.gz"), "--patches", str(PATCHES)], tmp_path,
                     PATCH_STARTED, hold=True)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode(), stdout) == (130, MESSAGE, b"")
    assert list(out.iterdir()) == []
    assert drop.read_bytes() == before


def test_a_signal_stops_a_write_stuck_mid_way_and_its_temporary_is_removed(tmp_path: Path) -> None:
    # The writer's temporary (and the folders made for it) exist when the
    # signal comes, and the child cannot remove them: the watcher does.
    work = tmp_path / "work"
    work.mkdir()
    process = _start(["apply", str(ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"), "-o",
                      "build/nested/ctx.tar.gz", "--patches", str(PATCHES)], work, WRITE_STARTED, hold=True)
    (temporary,) = (work / "build" / "nested").iterdir()
    assert temporary.name.startswith(".ctx.tar.gz.") and temporary.name.endswith(".tmp")
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode(), stdout) == (130, MESSAGE, b"")
    assert list(work.iterdir()) == []


def test_a_folder_made_for_the_output_is_kept_when_another_run_put_a_file_in_it(tmp_path: Path) -> None:
    # The folders apply made for its output are removed on an interrupt only
    # while empty: a concurrent run may have written its own output there.
    work = tmp_path / "work"
    work.mkdir()
    process = _start(["apply", str(ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"), "-o",
                      "build/nested/ctx.tar.gz", "--patches", str(PATCHES)], work, WRITE_STARTED, hold=True)
    other = work / "build" / "nested" / "other-run.tar.gz"
    other.write_bytes(b"another run's output")
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode(), stdout) == (130, MESSAGE, b"")
    assert [p.name for p in (work / "build" / "nested").iterdir()] == ["other-run.tar.gz"]  # the temporary alone went
    assert other.read_bytes() == b"another run's output"


def test_an_interrupt_still_exits_130_when_nothing_reads_stderr_any_more(tmp_path: Path) -> None:
    # 'patcher apply ... 2>&1 | head -1': the reader is gone when the watcher (or the
    # child, if the signal reached it before it held) says "interrupted"; that write
    # fails, and the exit status stays 130.
    work = tmp_path / "work"
    work.mkdir()
    process = _start(["apply", str(ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"), "-o", "ctx.tar",
                      "--patches", str(PATCHES)], work, WRITE_STARTED, hold=True)
    assert process.stderr is not None
    process.stderr.close()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 130
    assert process.stdout is not None and process.stdout.read() == b""
    assert list(work.iterdir()) == []


def test_a_signal_during_a_write_that_can_react_ends_it_as_before(tmp_path: Path) -> None:
    # Not held: the child unwinds by itself, removes its temporary and says
    # the one line; the watcher adds nothing to it.
    work = tmp_path / "work"
    work.mkdir()
    process = _start(["apply", str(ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"), "-o", "ctx.zip",
                      "--patches", str(PATCHES)], work, WRITE_STARTED, hold=False)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode(), stdout) == (130, MESSAGE, b"")
    assert list(work.iterdir()) == []


def test_a_command_killed_outright_still_leaves_no_temporary(tmp_path: Path) -> None:
    # The command's own process is killed (as the out-of-memory killer
    # would): the watcher removes its temporary and ends as it did.
    work = tmp_path / "work"
    work.mkdir()
    process = _start(["apply", str(ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"), "-o", "ctx.tar",
                      "--patches", str(PATCHES)], work, WRITE_STARTED, hold=True)
    assert [p.name.endswith(".tmp") for p in work.iterdir()] == [True]
    os.kill(_child_of(process.pid), signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL and stderr == b""
    assert list(work.iterdir()) == []


def test_exit_codes_and_output_pass_through_the_watcher(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PATCHER_NO_SUPERVISOR", None)
    missing = subprocess.run([sys.executable, "-m", "patcher", "apply", "missing.zip"], cwd=tmp_path,
                             capture_output=True, env=env, check=False)
    assert (missing.returncode, missing.stdout) == (2, b"")
    assert missing.stderr.decode().count("\n") == 1 and missing.stderr.startswith(b"error: missing.zip: ")
    version = subprocess.run([sys.executable, "-m", "patcher", "--version"], capture_output=True, env=env, check=False)
    assert (version.returncode, version.stderr) == (0, b"")
    assert version.stdout.decode().split()[-1] == __import__("patcher").__version__


_TWICE = """
import os, signal, sys
from pathlib import Path
from patcher.interrupt import raise_on_signals, temporary
temp = Path(sys.argv[1])
raise_on_signals()
with temporary(temp):
    temp.write_bytes(b"half an output")
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        while True:
            signal.pause()
    except KeyboardInterrupt:
        # The clean-up the first signal started is itself interrupted.
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            signal.pause()
"""


def test_a_second_signal_ends_the_run_at_once_and_removes_its_temporaries(tmp_path: Path) -> None:
    # In one process (as under a test runner, or with PATCHER_NO_SUPERVISOR=1):
    # the first signal unwinds; a second one, while that is going on, ends
    # the process there, after removing what it registered.
    temp = tmp_path / ".ctx.tar.gz.1.0123456789abcdef.tmp"
    done = subprocess.run([sys.executable, "-c", _TWICE, str(temp)], capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_default_sigint, check=False)
    assert (done.returncode, done.stderr.decode(), done.stdout) == (130, MESSAGE, b"")
    assert not temp.exists()


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
