"""Hostile and broken input through the CLI: one line, exit 2, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from test_archive_read import CASES

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


def test_interrupting_apply_mid_write_leaves_no_output(tmp_path: Path, vendor_copy: Path, make_zip) -> None:  # type: ignore[no-untyped-def]
    # A large, incompressible member keeps the writer busy long enough to interrupt it.
    (vendor_copy / "weights.bin").write_bytes(os.urandom(96 << 20))
    big = make_zip(vendor_copy, "big.zip")
    work = tmp_path / "work"
    work.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "patcher", "apply", str(big), "-o", "ctx.tar.gz", "--patches", str(ROOT / "patches")],
        cwd=work, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while not any(p.name.endswith(".tmp") for p in work.iterdir()):
        assert process.poll() is None, "apply finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert b"interrupted; nothing was written" in stderr
    assert list(work.iterdir()) == []
