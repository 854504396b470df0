"""A reader that stops reading (``patcher diff X | head -1``) ends the command quietly.

The command exits with the verdict it had reached (0 for a plain diff, as ``git log | head``
leaves a pipeline that passes; 1 for a failing check or upgrade, which a closed pipe must not
turn into a pass), prints no error, no traceback, and no "Exception ignored" line at
interpreter exit. Each test runs the real CLI in a subprocess with its stdout a real pipe whose
reader is gone before the first byte: the one way to make every write fail, whatever the timing
(a reader that stops mid-way, as ``head -1`` does, may or may not catch the writer writing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from make_upgrade_pairs import make_pair
from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_ZIP


def _environment() -> dict[str, str]:
    # This checkout's code, also in the child (conftest's cache folder comes with os.environ).
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def run_into_closed_pipe(cwd: Path, *args: object, stderr_too: bool = False) -> subprocess.CompletedProcess[bytes]:
    """Run ``patcher ARGS`` with stdout (and with ``stderr_too`` stderr: ``2>&1 | head``) a pipe whose
    reader is gone before the first byte is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "patcher", *map(str, args)], stdout=write,
                              stderr=write if stderr_too else subprocess.PIPE, cwd=cwd, env=_environment(),
                              check=False, timeout=300)
    finally:
        os.close(write)


def _quiet(stderr: bytes) -> None:
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr
    assert b"BrokenPipeError" not in stderr and b"error:" not in stderr
    assert stderr == b""


@pytest.mark.parametrize("command", [("diff",), ("inspect",), ("check",)])
def test_a_reader_gone_before_the_output_ends_the_command_with_exit_0(tmp_path, command) -> None:  # type: ignore[no-untyped-def]
    done = run_into_closed_pipe(tmp_path, *command, VENDOR_ZIP)
    assert done.returncode == 0
    _quiet(done.stderr)


def test_upgrade_into_a_closed_pipe_exits_with_its_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "same", "unchanged")
    done = run_into_closed_pipe(tmp_path, "upgrade", old, new)
    assert done.returncode == 0
    _quiet(done.stderr)
    old, new = make_pair(tmp_path / "broken", "no-longer-applies")
    done = run_into_closed_pipe(tmp_path, "upgrade", old, new)
    assert done.returncode == 1  # the verdict stands: a closed pipe is no pass
    _quiet(done.stderr)


def test_a_failing_check_into_a_closed_pipe_still_exits_1(tmp_path, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).write_bytes((vendor_copy / "paged_attn.py").read_bytes())  # imports the Triton kernel
    done = run_into_closed_pipe(tmp_path, "check", vendor_copy)
    assert done.returncode == 1
    _quiet(done.stderr)


def test_apply_whose_report_reader_is_gone_keeps_its_exit_code(tmp_path, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).write_bytes((vendor_copy / "paged_attn.py").read_bytes())  # no patch applies
    done = run_into_closed_pipe(tmp_path, "apply", vendor_copy, "-o", tmp_path / "ctx", stderr_too=True)
    assert done.returncode == 2 and not (tmp_path / "ctx").exists()
    done = run_into_closed_pipe(tmp_path, "apply", VENDOR_ZIP, "-o", tmp_path / "ctx", stderr_too=True)
    assert done.returncode == 0 and (tmp_path / "ctx").is_dir()


@pytest.mark.parametrize("command", ["apply", "verify-sync", "check"])
def test_an_error_whose_stderr_reader_is_gone_keeps_its_exit_code(tmp_path, command) -> None:  # type: ignore[no-untyped-def]
    # 'patcher apply missing.zip 2>&1 | head -0': the error line cannot be written, and the run
    # still fails (it used to end as if the reader had stopped a passing run: exit 0).
    done = run_into_closed_pipe(tmp_path, command, tmp_path / "missing.zip", stderr_too=True)
    assert done.returncode == 2
    assert not any(p.name != "missing.zip" for p in tmp_path.iterdir())


# In this process, as a shell pipeline's writer sees it: stdout (and stderr) are real pipes, the
# reader of stdout is gone, and every write to it fails with BrokenPipeError (Python ignores SIGPIPE).


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def run_in_process_into_closed_pipe(monkeypatch: pytest.MonkeyPatch, *args: object) -> tuple[int, bytes, bool]:
    """Run ``patcher ARGS`` here with stdout a pipe whose reader is gone; return the exit code, what
    reached stderr, and whether both streams were pointed at the null device."""
    from patcher.cli import main

    gone, stdout_fd = os.pipe()
    os.close(gone)
    stderr_read, stderr_fd = os.pipe()
    stdout, stderr = os.fdopen(stdout_fd, "w"), os.fdopen(stderr_fd, "w")
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    before = _open_fds()
    try:
        with pytest.raises(SystemExit) as done:
            main.main([str(a) for a in args], prog_name="patcher")
        null = os.stat(os.devnull)
        silenced = all(os.fstat(fd).st_rdev == null.st_rdev and os.fstat(fd).st_ino == null.st_ino
                       for fd in (stdout_fd, stderr_fd))
        assert _open_fds() == before  # the null device's own descriptor is closed again
    finally:
        monkeypatch.undo()
        for stream in (stdout, stderr):
            try:
                stream.close()
            except OSError:
                pass
    with os.fdopen(stderr_read, "rb") as pipe:
        said = pipe.read()
    return (done.value.code or 0), said, silenced  # type: ignore[return-value]


def test_in_process_a_gone_reader_ends_the_command_quietly_with_the_verdict(monkeypatch, tmp_path,  # type: ignore[no-untyped-def]
                                                                            vendor_copy) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_in_process_into_closed_pipe(monkeypatch, "diff", VENDOR_ZIP) == (0, b"", True)
    (vendor_copy / SHIPPED).write_bytes((vendor_copy / "paged_attn.py").read_bytes())  # imports the Triton kernel
    assert run_in_process_into_closed_pipe(monkeypatch, "check", vendor_copy) == (1, b"", True)
    # The next command starts from "nothing reached": explain records no verdict, and exits 0.
    assert run_in_process_into_closed_pipe(monkeypatch, "explain", "three-tier-decode") == (0, b"", True)
