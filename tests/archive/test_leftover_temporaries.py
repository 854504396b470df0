"""What a killed run left beside its output is removed by the next run writing there, and nothing else is.

A SIGKILL (or a power cut) ends a run before any clean-up: its temporary
``.NAME.PID.<16 hex>.tmp`` (or a folder output's ``.old`` copy) stays. The
next run writing to that folder removes exactly those names, when the
process the name holds is gone and nothing in them changed for a minute; a
concurrent run's temporary, a link, or any other name is left alone. Ages
are made with ``os.utime``, never waited for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat
from patcher.archive.writer import LEFTOVER_AGE, remove_leftovers, write_output
from tests.fixtures_vendor import PATCHES, ROOT, VENDOR_ZIP

HEX = "0123456789abcdef"


@pytest.fixture(scope="module")
def gone_pid() -> int:
    """The id of a process that has ended (a short child, waited for)."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return int(child.stdout)


def _age(path: Path, seconds: float = LEFTOVER_AGE + 60) -> None:
    """Make PATH, and all under it, look unchanged for SECONDS (links themselves, never their targets)."""
    then = time.time() - seconds
    for root, folders, files in os.walk(path):
        for name in folders + files:
            os.utime(os.path.join(root, name), (then, then), follow_symlinks=False)
    os.utime(path, (then, then), follow_symlinks=False)


def _leftover(folder: Path, pid: int, *, kind: str = "tmp", name: str = "ctx.tar.gz", aged: bool = True) -> Path:
    path = folder / f".{name}.{pid}.{HEX}.{kind}"
    path.write_bytes(b"half a tar")
    if aged:
        _age(path)
    return path


def test_an_old_temporary_of_a_process_that_is_gone_is_removed(tmp_path: Path, gone_pid: int) -> None:
    tar = _leftover(tmp_path, gone_pid)
    old = _leftover(tmp_path, gone_pid, kind="old", name="ctx")
    assert sorted(remove_leftovers(tmp_path)) == sorted([tar, old])
    assert list(tmp_path.iterdir()) == []


def test_a_fresh_temporary_survives_even_if_its_process_is_gone(tmp_path: Path, gone_pid: int) -> None:
    fresh = _leftover(tmp_path, gone_pid, aged=False)
    assert remove_leftovers(tmp_path) == [] and fresh.exists()


def test_an_old_temporary_of_a_running_process_survives(tmp_path: Path) -> None:
    # A concurrent run that has not written for a minute (its pid is alive).
    mine = _leftover(tmp_path, os.getpid())
    parents = _leftover(tmp_path, os.getppid())
    assert remove_leftovers(tmp_path) == [] and mine.exists() and parents.exists()


def test_a_folder_left_by_a_folder_output_goes_with_what_is_in_it(tmp_path: Path, gone_pid: int) -> None:
    folder = tmp_path / f".ctx.{gone_pid}.{HEX}.tmp"
    (folder / "qwen3_6_scripts").mkdir(parents=True)
    (folder / "qwen3_6_scripts" / "paged_attn.py").write_bytes(b"half")
    _age(folder)
    assert remove_leftovers(tmp_path) == [folder]
    assert list(tmp_path.iterdir()) == []


def test_a_folder_with_anything_fresh_deep_inside_survives(tmp_path: Path, gone_pid: int) -> None:
    # A concurrent run in another container (its pid not seen here) still
    # writing files deep in its folder: the folder's own mtime is old.
    folder = tmp_path / f".ctx.{gone_pid}.{HEX}.tmp"
    (folder / "a" / "b").mkdir(parents=True)
    _age(folder)
    (folder / "a" / "b" / "new.py").write_bytes(b"just written")
    assert remove_leftovers(tmp_path) == [] and folder.exists()


def test_a_link_named_like_a_temporary_is_neither_followed_nor_removed(tmp_path: Path, gone_pid: int) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_bytes(b"keep")
    for kind, target in (("tmp", precious), ("old", precious / "keep.txt")):
        link = tmp_path / f".ctx.{gone_pid}.{HEX}.{kind}"
        link.symlink_to(target)
        _age(link)
    _age(precious)
    assert remove_leftovers(tmp_path) == []
    assert (precious / "keep.txt").read_bytes() == b"keep"
    assert len(list(tmp_path.iterdir())) == 3


@pytest.mark.parametrize("name", [
    "ctx.tar.gz",  # the output itself
    ".ctx.tar.gz.tmp",  # no pid, no random part
    f".ctx.tar.gz.123.{HEX[:15]}.tmp",  # a random part one digit short
    f".ctx.tar.gz.123.{HEX.upper()}.tmp",  # not as it is written
    f".ctx.tar.gz.123.{HEX}.tmp.bak",  # something after it
    f"ctx.tar.gz.123.{HEX}.tmp",  # not hidden
    f".ctx.tar.gz.12a.{HEX}.tmp",  # no pid
    f".ctx.tar.gz.123.{HEX}.partial",  # another tool's
])
def test_no_other_name_is_touched(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"someone else's")
    _age(path)
    assert remove_leftovers(tmp_path) == [] and path.read_bytes() == b"someone else's"


def test_writing_an_output_removes_the_leftovers_beside_it_only(tmp_path: Path, gone_pid: int) -> None:
    old = _leftover(tmp_path, gone_pid, name="other.zip")
    fresh = _leftover(tmp_path, gone_pid, aged=False)
    below = tmp_path / "sub"
    below.mkdir()
    deeper = _leftover(below, gone_pid)
    write_output(tmp_path / "ctx.tar", [OutputFile("Dockerfile", False, data=b"FROM scratch\n")], fmt=OutputFormat.TAR)
    assert not old.exists() and fresh.exists() and deeper.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ctx.tar", fresh.name, "sub"])


def _apply_argv(output: Path, *extra: str) -> list[str]:
    """``patcher apply`` of the vendor fixture to OUTPUT, run in a child.

    The child works in the checkout, as the other tests' children do (a
    mutation run's hook in it reads setup.cfg from there); OUTPUT is in the
    test's folder.
    """
    return [sys.executable, "-m", "patcher", "apply", str(VENDOR_ZIP), "-o", str(output), "--patches", str(PATCHES),
            *extra]


def test_the_temporary_of_a_run_killed_mid_write_goes_with_the_next_run(tmp_path: Path) -> None:
    # A real apply killed outright while it writes (the whole process group,
    # watcher and command): nothing in it could clean up.
    out = tmp_path / "work" / "out"
    out.parent.mkdir()
    started, started_w = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATCHER_TEST_WRITE_STARTED": f"/dev/fd/{started_w}"}
    process = subprocess.Popen(_apply_argv(out / "ctx.tar.gz"), cwd=ROOT, stderr=subprocess.PIPE,
                               pass_fds=[started_w], env=env, start_new_session=True)
    os.close(started_w)
    with os.fdopen(started, "rb") as pipe:
        assert pipe.readline() == b"write started\n", process.communicate(timeout=120)[1]
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=120)
    (left,) = out.iterdir()
    assert left.name.startswith(".ctx.tar.gz.") and left.name.endswith(".tmp")
    # Another run's fresh temporary in the same folder must survive the next run.
    concurrent = out / f".ctx.zip.{os.getpid()}.{HEX}.tmp"
    concurrent.write_bytes(b"being written")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    again = subprocess.run(_apply_argv(out / "ctx.tar.gz"), cwd=ROOT, capture_output=True, env=env, check=False)
    assert again.returncode == 0, again.stderr
    assert left.exists()  # a minute has not passed: it might still be written
    _age(left)
    again = subprocess.run(_apply_argv(out / "ctx.tar.gz", "--force"), cwd=ROOT, capture_output=True, env=env,
                           check=False)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(["ctx.tar.gz", concurrent.name])
