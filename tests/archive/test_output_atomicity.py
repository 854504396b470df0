"""An output appears whole or not at all.

A failure or an interruption mid-write leaves the old output or none: no temporary, and no
parent folder the run created; runs side by side use temporaries of their own.
"""

from __future__ import annotations

import errno
import io
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output, writer
from patcher.errors import OutputError
from tests.fixtures_archives import SUFFIX, corpus_files, sample_files


def fail_after(files: Iterable[OutputFile], exc: BaseException) -> Iterator[OutputFile]:
    """Yield FILES, then raise EXC: a caller whose own input fails mid-write."""
    yield from files
    raise exc


def _failing_files(exc: BaseException) -> Iterator[OutputFile]:
    return fail_after(sample_files()[:3], exc)


class _Interrupting(io.RawIOBase):
    """A stream that raises after a few reads, as Ctrl-C would mid-copy."""

    def __init__(self, exc: BaseException, after: int) -> None:
        self._exc = exc
        self._left = after

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._left == 0:
            raise self._exc
        self._left -= 1
        return b"x" * 1000


def _interrupted_files(exc: BaseException) -> list[OutputFile]:
    stream = OutputFile(
        "qwen3_6_scripts/big.bin",
        False,
        source=lambda: _Interrupting(exc, after=3),  # type: ignore[arg-type,return-value]
        size=10_000,
    )
    return [*sample_files(), stream]


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("where", ["iterator", "stream"])
def test_failure_mid_write_leaves_nothing(tmp_path: Path, fmt: OutputFormat, where: str) -> None:
    dest = tmp_path / "made" / "for" / SUFFIX[fmt]
    files: Callable[[BaseException], object] = _failing_files if where == "iterator" else _interrupted_files
    with pytest.raises(KeyboardInterrupt):
        write_output(dest, files(KeyboardInterrupt()), fmt=fmt)  # type: ignore[arg-type]
    # The parents this call created are gone with the temporary.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_failure_with_force_keeps_the_old_output(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    dest.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        write_output(dest, _interrupted_files(RuntimeError("boom")), fmt=fmt, force=True)
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == [dest.name]


def test_a_folder_replaced_with_force_is_put_back_if_the_new_one_cannot_move_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "ctx"
    (dest / "scripts").mkdir(parents=True)
    (dest / "scripts" / "run.sh").write_bytes(b"echo old\n")
    real_rename = os.rename

    def rename(src: object, dst: object) -> None:
        if str(src).endswith(".tmp"):  # the new output, moving into place
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_rename(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutputError, match="cannot write: Input/output error"):
        write_output(dest, corpus_files(), fmt=OutputFormat.DIRECTORY, force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["ctx"]
    assert (dest / "scripts" / "run.sh").read_bytes() == b"echo old\n"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["scripts", "scripts/run.sh"]


def test_existing_parent_folders_are_not_removed_on_failure(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(RuntimeError):
        write_output(tmp_path / "out" / "ctx.tar", _failing_files(RuntimeError()), fmt=OutputFormat.TAR)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "ctx.tar.gz"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR_GZ)
    assert dest.is_file()


def test_a_parent_made_meanwhile_by_another_run_is_used_and_not_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, *args: object) -> None:
        if Path(str(path)) == tmp_path / "build":  # another run creates it first
            real_mkdir(path)  # type: ignore[arg-type]
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        real_mkdir(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    dest = tmp_path / "build" / "ctx" / "out.tar"
    write_output(dest, corpus_files(), fmt=OutputFormat.TAR)
    assert dest.is_file()
    with pytest.raises(RuntimeError):
        write_output(tmp_path / "build" / "new" / "out.tar", fail_after(corpus_files(), RuntimeError("the caller's own failure")), fmt=OutputFormat.TAR)
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["ctx"]


def test_parents_made_before_a_failing_one_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, *args: object) -> None:
        if Path(str(path)).name == "locked":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        real_mkdir(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    folder = tmp_path / "build" / "locked"
    with pytest.raises(OutputError) as caught:
        write_output(folder / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        f"{folder}: cannot write to {tmp_path / 'build'}: permission denied"
        " (choose another output path or fix the folder's permissions)"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", [OutputFormat.TAR, OutputFormat.DIRECTORY], ids=lambda f: f.name)
def test_a_temporary_name_already_taken_is_neither_written_through_nor_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    # Names are unique by pid and 64 random bits; should one ever exist, it
    # is someone else's file: opened exclusively, and left alone on failure.
    monkeypatch.setattr(writer.secrets, "token_hex", lambda n: "0" * (2 * n))
    dest = tmp_path / "ctx"
    taken = tmp_path / f".ctx.{os.getpid()}.{'0' * 16}.tmp"
    taken.write_bytes(b"someone else's\n")
    with pytest.raises(OutputError) as caught:
        write_output(dest, corpus_files(), fmt=fmt)
    assert str(caught.value) == f"{dest}: cannot write: File exists"
    assert taken.read_bytes() == b"someone else's\n"
    assert [p.name for p in tmp_path.iterdir()] == [taken.name]


def test_concurrent_runs_use_distinct_temporaries(tmp_path: Path) -> None:
    # The timeout only turns a hang (runs serialised by a bug) into a failure;
    # it is far above any real wait, even on a loaded machine.
    both_writing = threading.Barrier(2, timeout=120)
    seen: list[list[str]] = []

    def opener() -> BinaryIO:
        both_writing.wait()  # each run is now mid-write, its temporary on disk
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        return io.BytesIO(b"data")

    def run(name: str) -> None:
        files = [*sample_files(), OutputFile("z.bin", False, source=opener, size=4)]
        write_output(tmp_path / name, files, fmt=OutputFormat.TAR)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("one.tar", "two.tar")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 2 and all(len(names) == 2 for names in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.tar", "two.tar"]
    assert (tmp_path / "one.tar").read_bytes() == (tmp_path / "two.tar").read_bytes()
