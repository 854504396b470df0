"""The gzip bytes depend only on the data, the level and the block size.

Never on the number of threads, nor on how the data was handed over (write sizes, writes that
end on a block's edge).
"""

from __future__ import annotations

import gzip
import io
import random

import pytest

from patcher.archive.gzip_stream import GzipWriter, WINDOW
from tests.fixtures_archives import MIXED, compress


def test_bytes_do_not_depend_on_threads_or_write_sizes() -> None:
    reference = compress(MIXED, threads=1, writes=10_000)
    assert compress(MIXED[:50_000], threads=2, writes=1) == compress(MIXED[:50_000])
    for threads, writes in [(2, 65_536), (4, 777), (8, 1_000_000)]:
        assert compress(MIXED, threads=threads, writes=writes) == reference


@pytest.mark.parametrize("writes", [1000, WINDOW, WINDOW // 2 * 3])
def test_the_bytes_do_not_depend_on_writes_that_end_on_a_block_edge(writes: int) -> None:
    data = random.Random(5).randbytes(4 * WINDOW)  # exactly four blocks

    def compress(size: int) -> bytes:
        out = io.BytesIO()
        with GzipWriter(out, 6, threads=1, block=WINDOW) as stream:
            for start in range(0, len(data), size):
                stream.write(data[start : start + size])
        return out.getvalue()

    assert compress(writes) == compress(len(data))
    assert gzip.decompress(compress(writes)) == data


def test_the_default_level_is_gzips_own_six() -> None:
    data = b"token cache block query key value\n" * 4000
    outputs = []
    for args in ((), (6,)):
        out = io.BytesIO()
        with GzipWriter(out, *args, threads=1) as stream:
            stream.write(data)
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
