"""Every entry carries one time: SOURCE_DATE_EPOCH when set, else 1980-01-01.

SOURCE_DATE_EPOCH must be a whole number of seconds; an mtime may not be negative.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from patcher.archive import OutputFormat, write_output
from patcher.errors import OutputError
from tests.fixtures_archives import corpus_files, sample_files


def test_default_time_is_1980(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {315532800}


def test_source_date_epoch_sets_every_time_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    monkeypatch.setenv("SOURCE_DATE_EPOCH", " 1700000000\n")  # as a shell or CI file may leave it
    write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1_700_000_000}


def test_malformed_source_date_epoch_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(OutputError, match="SOURCE_DATE_EPOCH must be a whole number"):
        write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    assert list(tmp_path.iterdir()) == []


def test_a_malformed_source_date_epoch_says_what_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(OutputError) as caught:
        write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        "SOURCE_DATE_EPOCH must be a whole number of seconds, got 'yesterday'"
        " (unset it or give an integer such as 315532800)"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_negative_mtime_is_refused_with_its_value(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^mtime must not be negative, got -1$"):
        write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR, mtime=-1)
