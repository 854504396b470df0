"""Members stream into the output in bounded reads and little memory.

A source that holds another size than it declares is refused, and nothing is left behind.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tracemalloc
import zipfile
from functools import partial
from pathlib import Path
from typing import BinaryIO

import pytest

from patcher.archive import OutputFile, OutputFormat, open_source, write_output
from patcher.errors import BadArchive
from tests.fixtures_archives import SUFFIX, sample_files


class _BoundedStream(io.RawIOBase):
    """Produce SIZE bytes on the fly, failing on any unbounded read."""

    def __init__(self, size: int, bound: int = 1 << 20) -> None:
        self._left = size
        self._bound = bound
        self.largest = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        assert 0 < n <= self._bound, f"unbounded read({n})"
        self.largest = max(self.largest, n)
        n = min(n, self._left)
        self._left -= n
        return bytes([n % 251]) * n


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_large_member_is_copied_in_bounded_reads(tmp_path: Path, fmt: OutputFormat) -> None:
    size = 40 << 20
    streams: list[_BoundedStream] = []

    def opener() -> BinaryIO:
        streams.append(_BoundedStream(size))
        return streams[-1]  # type: ignore[return-value]

    files = [*sample_files(), OutputFile("wheels/engine.whl", False, source=opener, size=size)]
    write_output(tmp_path / SUFFIX[fmt], files, fmt=fmt)
    assert len(streams) == 1 and 0 < streams[0].largest <= 1 << 20


def test_zip_to_tar_gz_streams_a_40_mb_member_in_little_memory(tmp_path: Path) -> None:
    source = tmp_path / "vendor.zip"
    wheel = os.urandom(40 << 20)
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("v/Dockerfile", b"FROM x\n")
        archive.writestr("v/wheels/engine.whl", wheel)  # stored: fast to build
    with open_source(source) as tree:
        files = [
            OutputFile(f.path, f.executable, source=partial(tree.open, f.path), size=f.size)
            for f in tree.files()
        ]
        tracemalloc.start()
        try:
            write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak} bytes"
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        handle = archive.extractfile("wheels/engine.whl")
        assert handle is not None and hashlib.sha256(handle.read()).digest() == hashlib.sha256(wheel).digest()


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("actual, message", [(3, "ended after 3 of its 4 bytes"), (5, "holds more than its declared 4")])
def test_source_of_the_wrong_size_is_refused(
    tmp_path: Path, fmt: OutputFormat, actual: int, message: str
) -> None:
    wrong = OutputFile("x.bin", False, source=lambda: io.BytesIO(b"x" * actual), size=4)
    with pytest.raises(BadArchive, match=message):
        write_output(tmp_path / SUFFIX[fmt], [*sample_files(), wrong], fmt=fmt)
    assert list(tmp_path.iterdir()) == []
