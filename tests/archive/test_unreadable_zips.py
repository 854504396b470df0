"""A zip that cannot be read at all is named, with what to do.

Missing, a folder, unreadable, truncated inside its end record, a zip64 locator pointing at a
short record, or written for a newer zip version.
"""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive
from tests.fixtures_archives import TOP, corpus, corpus_zip


def test_missing_input_is_reported(tmp_path: Path) -> None:
    with pytest.raises(BadArchive, match="no such file or folder"):
        with open_source(tmp_path / "nope.zip"):
            pass


def test_a_missing_or_unreadable_zip_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(BadArchive) as caught:
        ZipSource(tmp_path / "gone.zip")
    assert str(caught.value) == f"{tmp_path / 'gone.zip'}: no such file"
    with pytest.raises(BadArchive) as caught:
        ZipSource(tmp_path)  # a folder given where a zip file is expected
    assert str(caught.value) == (f"{tmp_path}: is a folder, not a regular file "
                                 "(pass the vendor .zip, a build context, or an unpacked folder)")


def test_an_unreadable_zip_says_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o000 means nothing.
    from patcher.archive import limits

    def deny(path: object, flags: int, mode: int = 0o777) -> object:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    path = corpus_zip(tmp_path / "v.zip")
    monkeypatch.setattr(limits.os, "open", deny)
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == f"{path}: cannot read the file: permission denied"


@pytest.mark.parametrize("cut", [1, 11, 21])
def test_a_zip_cut_inside_its_end_record_is_truncated(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.with_base()[:-cut])
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: the zip is truncated or corrupt: its central directory cannot be read (download it again)"
    )


def test_zip64_locator_pointing_at_a_short_record_is_not_a_crash(tmp_path: Path) -> None:
    # The locator points into the comment, where a zip64 record's magic starts
    # but fewer bytes than a record follow.
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0, 0, 6)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, 20 + len(eocd), 1)
    path = tmp_path / "short.zip"
    path.write_bytes(locator + eocd + b"PK\x06\x06xx")
    with pytest.raises(BadArchive, match="truncated or corrupt"):
        ZipSource(path)


def test_a_zip_needing_a_newer_zip_version_is_refused_with_zipfiles_reason(tmp_path: Path) -> None:
    data = bytearray(corpus.with_base())
    _, central = corpus._headers(bytes(data), (TOP + "scripts/run.sh").encode())
    data[central.at + 6] = 80  # 'version needed to extract': 8.0, beyond what zipfile reads
    path = tmp_path / "v.zip"
    path.write_bytes(bytes(data))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: the zip uses a feature that is not supported (zip file version 8.0)"
        " (re-create the zip with a common tool)"
    )
