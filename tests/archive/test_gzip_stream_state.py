"""The writer is a file: tell() counts the bytes written to it, and a write after close is refused."""

from __future__ import annotations

import io

import pytest

from patcher.archive.gzip_stream import GzipWriter


def test_tell_counts_uncompressed_bytes() -> None:
    with GzipWriter(io.BytesIO(), threads=1) as stream:
        stream.write(b"abc")
        stream.write(memoryview(b"defg"))
        assert stream.tell() == 7


def test_writing_after_close_is_refused() -> None:
    stream = GzipWriter(io.BytesIO(), threads=1)
    stream.close()
    with pytest.raises(ValueError, match=r"^write to a closed GzipWriter$"):
        stream.write(b"late")
