"""A zip output keeps the vendor's top folder, unix types and modes, and one date in UTC.

Files are deflated, folders stored; the date is clamped to what a zip can store.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from patcher.archive import OutputFormat, write_output
from tests.fixtures_archives import PREFIX, corpus_files, sample_files


def test_zip_entries_carry_prefix_unix_modes_and_a_1980_or_later_date(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.zip"
    write_output(dest, sample_files(), fmt=OutputFormat.ZIP, zip_prefix=PREFIX, mtime=0)
    with zipfile.ZipFile(dest) as archive:
        infos = archive.infolist()
    assert infos[0].filename == PREFIX
    for info in infos:
        assert info.filename.startswith(PREFIX)
        assert info.create_system == 3
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        kind = stat.S_IFMT(info.external_attr >> 16)
        assert kind == (stat.S_IFDIR if info.is_dir() else stat.S_IFREG)
        if not info.is_dir():
            assert info.compress_type == zipfile.ZIP_DEFLATED


def test_zip_entries_carry_unix_types_modes_and_methods(tmp_path: Path) -> None:
    write_output(tmp_path / "ctx.zip", corpus_files(), fmt=OutputFormat.ZIP, zip_prefix="top/", mtime=1_700_000_000)
    with zipfile.ZipFile(tmp_path / "ctx.zip") as archive:
        got = [(i.filename, i.create_system, i.external_attr, i.compress_type, i.date_time) for i in archive.infolist()]
    when = (2023, 11, 14, 22, 13, 20)
    assert got == [
        ("top/", 3, (stat.S_IFDIR | 0o755) << 16 | 0x10, zipfile.ZIP_STORED, when),
        ("top/Dockerfile", 3, (stat.S_IFREG | 0o644) << 16, zipfile.ZIP_DEFLATED, when),
        ("top/scripts/", 3, (stat.S_IFDIR | 0o755) << 16 | 0x10, zipfile.ZIP_STORED, when),
        ("top/scripts/run.sh", 3, (stat.S_IFREG | 0o755) << 16, zipfile.ZIP_DEFLATED, when),
    ]


@pytest.mark.parametrize(
    ("mtime", "date_time"),
    [
        (0, (1980, 1, 1, 0, 0, 0)),  # before a zip can store: the earliest it can
        (315_532_799, (1980, 1, 1, 0, 0, 0)),
        (315_532_800, (1980, 1, 1, 0, 0, 0)),
        (1_700_000_000, (2023, 11, 14, 22, 13, 20)),  # UTC, whatever the zone
        (4_354_819_198, (2107, 12, 31, 23, 59, 58)),
        (4_354_819_199, (2107, 12, 31, 23, 59, 58)),  # after it: the latest it can
        (5_000_000_000, (2107, 12, 31, 23, 59, 58)),
    ],
)
def test_zip_times_are_utc_clamped_to_what_a_zip_can_store(mtime: int, date_time: tuple[int, ...]) -> None:
    from patcher.archive.zip_format import zip_date_time

    assert zip_date_time(mtime) == date_time
