"""apply writes the same bytes whatever the time zone, umask, locale or working folder.

Runs side by side do not interfere; every entry carries SOURCE_DATE_EPOCH, else 1980-01-01,
in UTC.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_vendor import ROOT


def test_output_is_identical_across_time_zone_umask_and_cwd(tmp_path: Path, vendor_zip: Path) -> None:
    digests = []
    for index, (tz, umask) in enumerate((("UTC", "022"), ("Asia/Shanghai", "077"))):
        work = tmp_path / f"run{index}" / "nested"
        work.mkdir(parents=True)
        script = f"import os; os.umask(0o{umask}); from patcher.cli import main; main()"
        env = {**os.environ, "TZ": tz, "LC_ALL": "C" if index else "C.UTF-8", "PYTHONPATH": str(ROOT)}
        env.pop("SOURCE_DATE_EPOCH", None)
        subprocess.run([sys.executable, "-c", script, "apply", str(vendor_zip), "-o", "ctx.tar.gz",
                        "--patches", str(ROOT / "patches")], cwd=work, env=env, check=True, capture_output=True)
        digests.append(hashlib.sha256((work / "ctx.tar.gz").read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_concurrent_runs_writing_different_outputs_do_not_interfere(tmp_path: Path, vendor_zip: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "patcher", "apply", str(vendor_zip), "--patches", str(ROOT / "patches"), "-o"]
    runs = [subprocess.Popen([*command, name], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
            for name in ("a.tar.gz", "b.tar.gz", "c.zip")]
    assert [run.wait(timeout=120) for run in runs] == [0, 0, 0]
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "b.tar.gz", "c.zip"]


def test_source_date_epoch_sets_the_mtime(cli, vendor_zip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert cli("apply", vendor_zip, "-o", "ctx.tar").exit_code == 0
    with tarfile.open(cli.cwd / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1700000000}


@pytest.mark.parametrize("epoch", ["٣", "1e9", "9" * 5000])
def test_a_source_date_epoch_that_is_no_count_of_seconds_is_one_line_and_nothing_written(  # type: ignore[no-untyped-def]
        cli, vendor_zip, monkeypatch, epoch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    result = cli("apply", vendor_zip, "-o", "ctx.tar")
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line.startswith("error: ")][0].startswith(
        "error: SOURCE_DATE_EPOCH must be a whole number of seconds")
    assert not (cli.cwd / "ctx.tar").exists()


@pytest.fixture
def far_time_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in UTC+5:30 (a POSIX TZ string: no zone database needed)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(("epoch", "date_time"), [
    (None, (1980, 1, 1, 0, 0, 0)),
    ("1700000000", (2023, 11, 14, 22, 13, 20)),  # UTC, whatever the local zone
])
def test_zip_output_dates_are_the_fixed_time(cli, vendor_zip, monkeypatch, far_time_zone, epoch, date_time) -> None:  # type: ignore[no-untyped-def]
    if epoch is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    assert cli("apply", vendor_zip, "-o", "out.zip").exit_code == 0
    with zipfile.ZipFile(cli.cwd / "out.zip") as archive:
        assert {info.date_time for info in archive.infolist()} == {date_time}
