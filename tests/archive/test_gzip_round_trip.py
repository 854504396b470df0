"""The block-parallel gzip writer writes one valid gzip member that gzip, zlib and GNU gzip read back."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess

import pytest

from patcher.archive.gzip_stream import GzipWriter, WINDOW
from tests.fixtures_archives import MIXED, SMALL_BLOCK, compress


@pytest.mark.parametrize(
    "size", [0, 1, WINDOW - 1, WINDOW, SMALL_BLOCK - 1, SMALL_BLOCK, SMALL_BLOCK + 1, len(MIXED)]
)
def test_round_trips_at_block_edges(size: int) -> None:
    data = MIXED[:size]
    assert gzip.decompress(compress(data)) == data
    assert gzip.decompress(compress(data, threads=3)) == data


@pytest.mark.parametrize("level", [0, 9])
def test_levels_zero_and_nine_are_both_allowed(level: int) -> None:
    data = b"token cache block\n" * 2000
    out = io.BytesIO()
    with GzipWriter(out, level, threads=1, block=WINDOW) as stream:
        stream.write(data)
    assert gzip.decompress(out.getvalue()) == data
    assert (len(out.getvalue()) > len(data)) == (level == 0)  # 0 stores, 9 deflates: the level is used


@pytest.mark.skipif(shutil.which("gzip") is None, reason="GNU gzip not installed")
def test_gnu_gzip_reads_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "data.gz"
    path.write_bytes(compress(MIXED, threads=2))
    result = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True)
    assert result.stdout == MIXED
