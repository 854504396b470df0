"""A write that fails says where, what and what to do.

A parent that is a file, permission denied, a full disk (or quota), any other OS error: each has
its own line, and the failed write leaves nothing behind.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from patcher.archive import OutputFormat, write_output
from patcher.errors import OutputError
from tests.fixtures_archives import SUFFIX, corpus_files, sample_files


def test_parent_that_is_a_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"")
    with pytest.raises(OutputError, match="a parent of the output is a file"):
        write_output(tmp_path / "a" / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)


def test_a_parent_that_is_a_file_is_named_with_the_folder_it_blocks(tmp_path: Path) -> None:
    (tmp_path / "build").write_bytes(b"not a folder\n")
    dest = tmp_path / "build" / "out" / "ctx.tar"
    with pytest.raises(OutputError) as caught:
        write_output(dest, corpus_files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        f"{tmp_path / 'build' / 'out'}: a parent of the output is a file, not a folder (choose another output path)"
    )


def test_unwritable_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o555 means nothing.
    real_open = os.open

    def deny(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith(".tmp"):  # the temporary beside the output
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(OutputError, match="permission denied") as caught:
        write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    assert str(tmp_path) in str(caught.value)


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_full_disk_is_reported_and_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    # Simulated at fsync, where delayed allocation reports a full disk.
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="disk full while writing .*free space and retry"):
        write_output(tmp_path / SUFFIX[fmt], sample_files(), fmt=fmt)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (errno.ENOSPC, "{dest}: disk full while writing ctx.tar (free space and retry)"),
        (getattr(errno, "EDQUOT", errno.ENOSPC), "{dest}: disk full while writing ctx.tar (free space and retry)"),
        (errno.EACCES, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EPERM, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EROFS, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EIO, "{dest}: cannot write: Input/output error"),
    ],
    ids=lambda value: errno.errorcode.get(value, "message") if isinstance(value, int) else "",
)
def test_each_write_failure_has_its_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, message: str
) -> None:
    # Simulated at fsync, where a network or full file system reports late.
    def fail(fd: int) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(os, "fsync", fail)
    dest = tmp_path / "ctx.tar"
    with pytest.raises(OutputError) as caught:
        write_output(dest, corpus_files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == message.format(dest=dest, parent=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_os_error_without_a_reason_is_shown_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fd: int) -> None:
        raise OSError("the device went away")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OutputError) as caught:
        write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == f"{tmp_path / 'ctx.tar'}: cannot write: the device went away"
