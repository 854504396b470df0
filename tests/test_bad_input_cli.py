"""Hostile and broken input through the CLI: one line, exit 2, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures_vendor import FIXTURES, ROOT
from tests.fixtures_archives import CASES

TINY_PATCH = '''
id = "raise-level"
description = "Raise the level"
origin = "test"
last-update = "2026-11-29"
target = "scripts/tool.py"
scope = ""
applied-when = ["LEVEL = 2"]

[[steps]]
op = "replace"
pattern = "LEVEL = 1"
code = "LEVEL = 2"
'''


@pytest.fixture
def tiny_patches(tmp_path: Path) -> Path:
    """A one-patch set that applies to the corpus's base tree."""
    folder = tmp_path / "tiny" / "patches"
    folder.mkdir(parents=True)
    (folder / "series").write_text("raise-level.toml\n")
    (folder / "raise-level.toml").write_text(TINY_PATCH)
    return folder


def test_the_corpus_base_tree_applies(cli, tiny_patches, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(FIXTURES / "bad" / "bad_crc.zip") as broken, zipfile.ZipFile(good, "w") as out:
        for info in broken.infolist():
            if not info.filename.endswith("data.txt"):
                out.writestr(info, broken.read(info))
    result = cli("apply", good, "-o", "ctx.tar", "--patches", tiny_patches)
    assert result.exit_code == 0, result.stderr
    assert "applied          raise-level" in result.stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_archive_is_one_line_exit_2_and_no_output(cli, tiny_patches, name: str) -> None:  # type: ignore[no-untyped-def]
    source = FIXTURES / "bad" / name
    before = source.read_bytes()
    result = cli("apply", source, "-o", "out/ctx.tar.gz", "--patches", tiny_patches)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert CASES[name].expect in result.stderr
    assert "Traceback" not in result.stderr
    assert list(cli.cwd.iterdir()) == []  # no output, no temporary, no parent folder left
    assert source.read_bytes() == before


def test_verbose_shows_the_traceback(cli, tiny_patches) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", FIXTURES / "bad" / "symlink.zip", "-o", "x.tar", "--patches", tiny_patches, "--verbose")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr


def test_limits_can_be_raised(cli, tiny_patches) -> None:  # type: ignore[no-untyped-def]
    bomb = FIXTURES / "bad" / "bomb_ratio.zip"
    refused = cli("apply", bomb, "-o", "x.tar", "--patches", tiny_patches)
    assert "--max-ratio" in refused.stderr
    assert cli("apply", bomb, "-o", "x.tar", "--patches", tiny_patches, "--max-ratio", "100000").exit_code == 0


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
