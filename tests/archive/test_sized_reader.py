"""A file's content is read in bounded, exact reads held to its declared size.

A source that fails, ends early or runs long is named, as the input it came from.
"""

from __future__ import annotations

import errno
import io
import os

import pytest

from patcher.archive import OutputFile
from patcher.archive.layout import CHUNK, SizedReader
from patcher.errors import BadArchive


class _Trickle(io.RawIOBase):
    """Hand out at most three bytes a read, as a pipe or a slow disk may."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = 3 if n < 0 else min(n, 3)
        block, self._data = self._data[:n], self._data[n:]
        return block


def test_short_reads_are_joined_into_exactly_the_bytes_asked_for() -> None:
    reader = SizedReader("scripts/run.sh", _Trickle(b"0123456789"), 10)  # type: ignore[arg-type]
    assert reader.read(8) == b"01234567"
    assert reader.read(8) == b"89"
    assert reader.read(8) == b""


@pytest.mark.parametrize("n", [None, -1, CHUNK + 1])
def test_an_unbounded_or_oversized_read_gets_one_chunk(n: int | None) -> None:
    data = bytes(range(256)) * (CHUNK // 256 + 1)
    reader = SizedReader("big.bin", io.BytesIO(data), len(data))  # type: ignore[arg-type]
    assert reader.read(n) == data[:CHUNK]
    assert reader.read(n) == data[CHUNK:]


def test_a_read_of_nothing_gets_nothing() -> None:
    reader = SizedReader("x.txt", io.BytesIO(b"abc"), 3)  # type: ignore[arg-type]
    assert reader.read(0) == b""
    assert reader.read(2) == b"ab"


class _Failing(io.RawIOBase):
    def __init__(self, exc: OSError) -> None:
        self._exc = exc

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        raise self._exc


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (OSError(errno.EIO, os.strerror(errno.EIO)), "cannot read 'scripts/run.sh': Input/output error"),
        (OSError("the share went away"), "cannot read 'scripts/run.sh': the share went away"),
    ],
)
def test_a_source_that_fails_to_read_is_named_as_the_input(exc: OSError, message: str) -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: _Failing(exc), size=4)  # type: ignore[arg-type,return-value]
    with file.reader() as reader, pytest.raises(BadArchive) as caught:
        reader.read(4)
    assert str(caught.value) == message


def test_a_source_that_ends_early_says_how_far_it_got() -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: _Trickle(b"echo"), size=10)  # type: ignore[arg-type,return-value]
    with file.reader() as reader, pytest.raises(BadArchive) as caught:
        reader.read(10)
    assert str(caught.value) == "'scripts/run.sh' ended after 4 of its 10 bytes (did it change while being read?)"


def test_a_source_that_runs_long_says_its_declared_size() -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: io.BytesIO(b"echo hi\n"), size=4)
    reader = file.reader()
    assert reader.read(4) == b"echo"
    with pytest.raises(BadArchive) as caught:
        reader.finish()
    assert str(caught.value) == "'scripts/run.sh' holds more than its declared 4 bytes (did it change while being read?)"
