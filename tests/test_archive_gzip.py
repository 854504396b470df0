"""The block-parallel gzip writer: valid gzip, the same bytes whatever the threads, stored when incompressible."""

from __future__ import annotations

import gzip
import io
import random
import shutil
import subprocess
import threading
import zlib

import pytest

from patcher.archive.gzip_stream import BLOCK, HEADER, WINDOW, GzipWriter, deflate_block

SMALL_BLOCK = 64 * 1024


def text(size: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    words = "tensor cache block query key value layer head scale token".split()
    out = bytearray()
    while len(out) < size:
        out += (" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) + "\n").encode()
    return bytes(out[:size])


def noise(size: int, seed: int = 2) -> bytes:
    return random.Random(seed).randbytes(size)


def compress(data: bytes, *, threads: int = 1, block: int = SMALL_BLOCK, writes: int = 10_000, level: int = 6) -> bytes:
    out = io.BytesIO()
    with GzipWriter(out, level, threads=threads, block=block) as stream:
        for start in range(0, len(data), writes):
            stream.write(data[start : start + writes])
    return out.getvalue()


MIXED = text(300_000) + noise(200_000) + text(90_000, seed=3) + b"\0" * 70_000


@pytest.mark.parametrize(
    "size", [0, 1, WINDOW - 1, WINDOW, SMALL_BLOCK - 1, SMALL_BLOCK, SMALL_BLOCK + 1, len(MIXED)]
)
def test_round_trips_at_block_edges(size: int) -> None:
    data = MIXED[:size]
    assert gzip.decompress(compress(data)) == data
    assert gzip.decompress(compress(data, threads=3)) == data


def test_bytes_do_not_depend_on_threads_or_write_sizes() -> None:
    reference = compress(MIXED, threads=1, writes=10_000)
    assert compress(MIXED[:50_000], threads=2, writes=1) == compress(MIXED[:50_000])
    for threads, writes in [(2, 65_536), (4, 777), (8, 1_000_000)]:
        assert compress(MIXED, threads=threads, writes=writes) == reference


def test_header_names_no_file_and_no_time() -> None:
    output = compress(b"hello\n")
    assert output[:10] == HEADER
    assert output[3] == 0 and output[4:8] == b"\0\0\0\0"


def test_text_shrinks_like_gzip_and_noise_is_stored() -> None:
    words = text(1_000_000)
    ours = len(compress(words, block=BLOCK))
    reference = len(gzip.compress(words, compresslevel=6, mtime=0))
    assert ours <= reference * 1.01  # blocks primed with the previous window lose almost nothing
    random_bytes = noise(4 * SMALL_BLOCK)
    stored = compress(random_bytes)
    assert len(stored) < len(random_bytes) + 200  # stored: 5 bytes per 64 KiB, plus framing
    assert gzip.decompress(stored) == random_bytes


def test_a_block_refers_back_into_the_previous_one() -> None:
    # The same 20 KiB on both sides of a block boundary: the second copy
    # must cost almost nothing.
    chunk = noise(20_000, seed=9)
    data = noise(SMALL_BLOCK - len(chunk), seed=8) + chunk + chunk
    first = deflate_block(data[:SMALL_BLOCK], b"", 6, False)
    second = deflate_block(data[SMALL_BLOCK:], data[SMALL_BLOCK - WINDOW : SMALL_BLOCK], 6, True)
    assert len(second) < 1_000
    assert zlib.decompress(first + second, -15) == data


def test_an_error_inside_the_block_writes_no_trailer_and_stops_the_threads() -> None:
    out = io.BytesIO()
    before = threading.active_count()
    with pytest.raises(RuntimeError):
        with GzipWriter(out, threads=4, block=SMALL_BLOCK) as stream:
            stream.write(MIXED)
            raise RuntimeError("reader failed")
    assert threading.active_count() == before
    with pytest.raises((EOFError, gzip.BadGzipFile, zlib.error)):
        gzip.decompress(out.getvalue())
    with pytest.raises(ValueError):
        stream.write(b"more")


def test_tell_counts_uncompressed_bytes() -> None:
    with GzipWriter(io.BytesIO(), threads=1) as stream:
        stream.write(b"abc")
        stream.write(memoryview(b"defg"))
        assert stream.tell() == 7


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        GzipWriter(io.BytesIO(), 10)
    with pytest.raises(ValueError):
        GzipWriter(io.BytesIO(), block=WINDOW - 1)


@pytest.mark.skipif(shutil.which("gzip") is None, reason="GNU gzip not installed")
def test_gnu_gzip_reads_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "data.gz"
    path.write_bytes(compress(MIXED, threads=2))
    result = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True)
    assert result.stdout == MIXED
