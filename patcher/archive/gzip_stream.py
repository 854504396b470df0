"""Compress a stream as one gzip member, block by block, on several threads.

Each block of input is deflated on its own, primed with the 32 KiB of
input before it and ended with a sync flush, so the raw deflate streams
join into one (pigz does the same). The output depends only on the data,
the level and the block size: never on the number of threads or on their
timing, so it is as reproducible as a single-threaded gzip.

A block whose content does not compress (the vendor's wheels and other
archives inside the context) is stored instead of deflated: deflate would
spend most of its time on it and produce a few bytes more. Whether a
block compresses is judged from samples of the block itself, so that
decision is reproducible too.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

BLOCK = 1 << 20
WINDOW = 1 << 15  # deflate's look-back: all a block may reference of the one before
# The header gzip.GzipFile writes with mtime=0 and no file name: no flags,
# no time, extra flags 0, OS 255 ("unknown"), so the bytes name no machine.
HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

_SAMPLES = 4
_SAMPLE = 4096
# Deflate at level 1 shrinks text to a third and machine code to about a
# half; random or already-compressed bytes stay above this.
_STORE_ABOVE = 0.95


def default_threads() -> int:
    """Return how many threads to compress with: the CPUs this process may use, at most 8."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, 8))


class GzipWriter:
    """A write-only binary stream that gzip-compresses into OUT.

    Close it (or leave its ``with`` block) to finish the member; on an
    exception inside the block the trailer is not written, since the
    output is being thrown away.
    """

    def __init__(self, out: BinaryIO, level: int = 6, *, threads: int | None = None, block: int = BLOCK) -> None:
        if not 0 <= level <= 9:
            raise ValueError(f"gzip level must be 0-9, got {level}")
        if block < WINDOW:
            raise ValueError(f"block size must be at least {WINDOW}, got {block}")
        self._out = out
        self._level = level
        self._block = block
        self._threads = threads or default_threads()
        self._pool = ThreadPoolExecutor(self._threads, "gzip") if self._threads > 1 else None
        self._jobs: deque[Future[bytes]] = deque()
        self._pending = bytearray()
        self._window = b""
        self._crc = 0
        self._size = 0
        self.closed = False
        out.write(HEADER)

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        """Return how many uncompressed bytes were written (tarfile asks)."""
        return self._size

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Take DATA for compression; return its length."""
        if self.closed:
            raise ValueError("write to a closed GzipWriter")
        view = memoryview(data).cast("B")
        self._crc = zlib.crc32(view, self._crc)
        self._size += view.nbytes
        if len(self._pending) + view.nbytes < self._block:
            self._pending += view
            return view.nbytes
        # Fill the pending block, then cut whole blocks straight from DATA:
        # each byte is copied once on its way to a worker.
        fill = self._block - len(self._pending)
        self._pending += view[:fill]
        self._submit(bytes(self._pending), last=False)
        start = fill
        while view.nbytes - start >= self._block:
            self._submit(bytes(view[start : start + self._block]), last=False)
            start += self._block
        self._pending = bytearray(view[start:])
        return view.nbytes

    def flush(self) -> None:
        """Do nothing: blocks are compressed whole, when full or on close."""

    def close(self) -> None:
        """Compress what is left, write the trailer, and stop the threads."""
        if self.closed:
            return
        try:
            self._submit(bytes(self._pending), last=True)
            self._pending.clear()
            self._drain(0)
            self._out.write(struct.pack("<II", self._crc, self._size & 0xFFFFFFFF))
        finally:
            self._stop()

    def abort(self) -> None:
        """Stop without finishing the member: the output is being discarded."""
        if not self.closed:
            self._stop()

    def __enter__(self) -> GzipWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _submit(self, block: bytes, *, last: bool) -> None:
        window = self._window
        self._window = (window + block)[-WINDOW:] if len(block) < WINDOW else block[-WINDOW:]
        if self._pool is None:
            self._out.write(deflate_block(block, window, self._level, last))
            return
        self._jobs.append(self._pool.submit(deflate_block, block, window, self._level, last))
        # A few blocks in flight keep every thread busy; more would only
        # hold memory.
        self._drain(2 * self._threads)

    def _drain(self, keep: int) -> None:
        while len(self._jobs) > keep:
            self._out.write(self._jobs.popleft().result())

    def _stop(self) -> None:
        self.closed = True
        for job in self._jobs:
            job.cancel()
        self._jobs.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def deflate_block(block: bytes, window: bytes, level: int, last: bool) -> bytes:
    """Return BLOCK as raw deflate that may refer back into WINDOW, the input just before it.

    The last block ends the stream; any other ends on a byte boundary with
    a sync flush, so the next block's deflate data can follow it directly.
    """
    if level and _incompressible(block):
        level = 0
    if window:
        engine = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, window)
    else:
        engine = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
    return engine.compress(block) + engine.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def _incompressible(block: bytes) -> bool:
    """Whether samples spread over BLOCK barely shrink under fast deflate."""
    if len(block) < _SAMPLES * _SAMPLE * 4:
        return False  # small: deflating it all costs little
    step = len(block) // _SAMPLES
    sample = b"".join(block[i * step : i * step + _SAMPLE] for i in range(_SAMPLES))
    return len(zlib.compress(sample, 1)) > _STORE_ABOVE * len(sample)
