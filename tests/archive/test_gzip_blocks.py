"""The gzip stream is laid out in blocks as pigz lays it out.

The first block is deflated alone, each later one primed with the 32 KiB before it and ended
with a sync flush; a block that does not compress is stored; the header names no file and no time.
"""

from __future__ import annotations

import gzip
import io
import random
import struct
import zlib

import pytest

from patcher.archive.gzip_stream import BLOCK, GzipWriter, HEADER, WINDOW, deflate_block
from tests.fixtures_archives import SMALL_BLOCK, compress, noise, text


def test_header_names_no_file_and_no_time() -> None:
    output = compress(b"hello\n")
    assert output[:10] == HEADER
    assert output[3] == 0 and output[4:8] == b"\0\0\0\0"


def test_a_block_refers_back_into_the_previous_one() -> None:
    # The same 20 KiB on both sides of a block boundary: the second copy
    # must cost almost nothing.
    chunk = noise(20_000, seed=9)
    data = noise(SMALL_BLOCK - len(chunk), seed=8) + chunk + chunk
    first = deflate_block(data[:SMALL_BLOCK], b"", 6, False)
    second = deflate_block(data[SMALL_BLOCK:], data[SMALL_BLOCK - WINDOW : SMALL_BLOCK], 6, True)
    assert len(second) < 1_000
    assert zlib.decompress(first + second, -15) == data


@pytest.mark.parametrize("threads", [1, 3])
def test_each_block_refers_back_into_the_one_before(threads: int) -> None:
    # 20,000 bytes of noise, repeated across five blocks of 32 KiB: each
    # block starts with bytes the block before it holds, so primed with that
    # block it costs almost nothing; alone, each would cost ~20 KB again.
    chunk = random.Random(13).randbytes(20_000)
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=threads, block=WINDOW) as stream:
        assert stream.writable()
        stream.write(chunk * 7)
    assert gzip.decompress(out.getvalue()) == chunk * 7
    assert len(out.getvalue()) < 20_000 + 4096


# A vendor env file with masked secrets: `XXXX` placeholders, the bytes a primed window would hold.
ENV_FILE = b"".join(
    b"# engine %d\r\nHF_TOKEN=hf_XXXXXXXXXXXXXXXX\r\nNGC_API_KEY=XXXX-XXXX-XXXX\r\nTP_SIZE=%d\r\n" % (i, 1 << i % 4)
    for i in range(40)
)


# The masked license key the vendor ships in place of the real one.
LICENSE_KEY = b"XXXX-XXXX-XXXX-XXXX\n"


@pytest.mark.parametrize("data", [ENV_FILE, LICENSE_KEY], ids=["env file", "license key"])
def test_text_with_placeholders_round_trips_and_equals_plain_raw_deflate(data: bytes) -> None:
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=1) as writer:
        writer.write(data)
    assert gzip.decompress(out.getvalue()) == data
    # One block: the deflate stream of the data alone (no preset dictionary), between gzip's framing.
    engine = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = engine.compress(data) + engine.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data))
    assert out.getvalue() == HEADER + raw + trailer


def _engine_log(size: int) -> bytes:
    """Return ``size`` bytes of an engine log: varied lines, so deflate's blocks fill as on real text."""
    rng = random.Random(7)
    words = "tensor cache block query key value layer head scale token prefill decode".split()
    out = bytearray()
    while len(out) < size:
        out += (f"[rank {rng.randint(0, 7)}] " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) + "\n").encode()
    return bytes(out[:size])


def test_each_block_is_zlibs_raw_deflate_primed_with_the_32_kib_before_it() -> None:
    # The pigz layout the module promises, built here from zlib's defaults: block one alone, each
    # later block with the previous 32 KiB as its dictionary, all but the last ended by a sync flush.
    # Compared with this process's zlib, so the bytes do not depend on the zlib build.
    data = _engine_log(BLOCK + 300_000)  # a full block and a shorter last one
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=2) as writer:
        writer.write(data)
    expected = HEADER
    for start in range(0, len(data), BLOCK):
        before = data[max(0, start - WINDOW) : start]
        engine = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS, zdict=before) if before else \
            zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        last = start + BLOCK >= len(data)
        expected += engine.compress(data[start : start + BLOCK]) + engine.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
    expected += struct.pack("<II", zlib.crc32(data), len(data))
    assert out.getvalue() == expected
    assert gzip.decompress(out.getvalue()) == data


def test_text_shrinks_like_gzip_and_noise_is_stored() -> None:
    words = text(1_000_000)
    ours = len(compress(words, block=BLOCK))
    reference = len(gzip.compress(words, compresslevel=6, mtime=0))
    assert ours <= reference * 1.01  # blocks primed with the previous window lose almost nothing
    random_bytes = noise(4 * SMALL_BLOCK)
    stored = compress(random_bytes)
    assert len(stored) < len(random_bytes) + 200  # stored: 5 bytes per 64 KiB, plus framing
    assert gzip.decompress(stored) == random_bytes


def _stored(block: bytes) -> bytes:
    """Return BLOCK as raw deflate at level 0: stored blocks only, the form judged-incompressible data takes."""
    import zlib

    engine = zlib.compressobj(0, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
    return engine.compress(block) + engine.flush(zlib.Z_FINISH)


def test_an_incompressible_block_is_stored_not_deflated() -> None:
    # zlib would fall back to stored blocks by itself, but only after trying:
    # the bytes differ from level 0's, which is what a judged block gets.
    block = random.Random(7).randbytes(1 << 20)
    raw = deflate_block(block, b"", 6, True)
    assert raw == _stored(block)
    assert zlib_decompress_raw(raw) == block


def zlib_decompress_raw(raw: bytes) -> bytes:
    import zlib

    return zlib.decompress(raw, -zlib.MAX_WBITS)


def test_a_block_just_large_enough_to_judge_is_judged() -> None:
    block = random.Random(3).randbytes(4 * 4096 * 4)  # the smallest block sampled: 64 KiB
    assert deflate_block(block, b"", 6, True) == _stored(block)
