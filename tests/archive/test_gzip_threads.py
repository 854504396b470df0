"""The gzip writer runs one thread per CPU this process may use, at most eight.

A failure inside the writer's block stops them all and writes no trailer.
"""

from __future__ import annotations

import gzip
import io
import threading
import zlib

import pytest

from patcher.archive import gzip_stream
from patcher.archive.gzip_stream import GzipWriter
from tests.fixtures_archives import MIXED, SMALL_BLOCK


@pytest.mark.parametrize(("cpus", "threads"), [({0}, 1), (set(range(16)), 8), ({0, 1, 2}, 3)])
def test_threads_follow_the_cpus_this_process_may_use_up_to_eight(
    monkeypatch: pytest.MonkeyPatch, cpus: set[int], threads: int
) -> None:
    monkeypatch.setattr(gzip_stream.os, "sched_getaffinity", lambda pid: cpus, raising=False)
    assert gzip_stream.default_threads() == threads


@pytest.mark.parametrize(("count", "threads"), [(None, 1), (1, 1), (4, 4), (32, 8)])
def test_without_cpu_affinity_the_cpu_count_decides(
    monkeypatch: pytest.MonkeyPatch, count: int | None, threads: int
) -> None:
    monkeypatch.delattr(gzip_stream.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(gzip_stream.os, "cpu_count", lambda: count)
    assert gzip_stream.default_threads() == threads


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
