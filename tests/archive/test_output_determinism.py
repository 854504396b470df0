"""The same files give the same bytes, whatever the environment or the order they come in.

Time zone, umask, locale, working folder and hash seed change nothing: each run writes every
format in a fresh interpreter, so nothing cached in this one can hide a difference.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from patcher.archive import OutputFormat, write_output
from tests.fixtures_archives import ARCHIVES, SUFFIX, read_back, sample_files
from tests.fixtures_vendor import ROOT


_WRITE_SCRIPT = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
os.umask(int(sys.argv[3], 8))
from tests.fixtures_archives import sample_files
from patcher.archive import OutputFormat, write_output
for fmt in OutputFormat:
    print(write_output(Path(sys.argv[4]) / fmt.name, sample_files(), fmt=fmt, zip_prefix="top/"))
"""


def run_writer(out: Path, *, tz: str, umask: str, epoch: str | None, cwd: Path) -> list[str]:
    """Write every format in a fresh interpreter; return the digests."""
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    env.update(TZ=tz, LC_ALL="C" if umask == "022" else "C.UTF-8", PYTHONHASHSEED="random")
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    result = subprocess.run(
        [sys.executable, "-c", _WRITE_SCRIPT, str(ROOT), str(Path(__file__).parent), umask, str(out)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.split()


def test_same_inputs_give_same_bytes_whatever_the_zone_umask_locale_or_cwd(tmp_path: Path) -> None:
    first = run_writer(tmp_path / "a", tz="UTC", umask="022", epoch=None, cwd=tmp_path)
    second = run_writer(tmp_path / "b", tz="Asia/Tokyo", umask="077", epoch=None, cwd=ROOT)
    assert first == second
    for fmt in ARCHIVES:
        assert (tmp_path / "a" / fmt.name).read_bytes() == (tmp_path / "b" / fmt.name).read_bytes()
    # The folder output's own modes do not follow the umask either.
    assert read_back(tmp_path / "a" / "DIRECTORY", OutputFormat.DIRECTORY) == read_back(
        tmp_path / "b" / "DIRECTORY", OutputFormat.DIRECTORY
    )


def test_source_date_epoch_sets_the_time(tmp_path: Path) -> None:
    default = run_writer(tmp_path / "a", tz="UTC", umask="022", epoch=None, cwd=tmp_path)
    pinned = run_writer(tmp_path / "b", tz="UTC", umask="022", epoch="1700000000", cwd=tmp_path)
    # Every archive changes; the folder digest covers only paths, modes and content.
    assert [a != b for a, b in zip(default, pinned)] == [True, True, True, False]
    with zipfile.ZipFile(tmp_path / "b" / "ZIP") as archive:
        assert archive.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)  # UTC
    with tarfile.open(tmp_path / "b" / "TAR_GZ") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1_700_000_000}


def test_input_order_does_not_matter(tmp_path: Path) -> None:
    files = sample_files()
    for fmt in ARCHIVES:
        one = write_output(tmp_path / f"1{SUFFIX[fmt]}", files, fmt=fmt)
        two = write_output(tmp_path / f"2{SUFFIX[fmt]}", list(reversed(files)), fmt=fmt)
        assert one == two
