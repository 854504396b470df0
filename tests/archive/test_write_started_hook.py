"""PATCHER_TEST_WRITE_STARTED announces a write in progress once, then waits to be interrupted.

The hook lets the CLI's interruption test signal a run that is really mid-write, without a race;
unset, nothing is announced and nothing waits.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output, writer
from tests.fixtures_archives import corpus, corpus_files


def test_the_write_started_hook_announces_once_then_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The hook lets the CLI's interruption test signal a write in progress;
    # here the wait is replaced, so the write runs on at once.
    marker = tmp_path / "started"
    waits: list[float] = []
    monkeypatch.setenv(writer.TEST_WRITE_STARTED, str(marker))
    monkeypatch.setattr(writer.time, "sleep", waits.append)
    seen: list[tuple[int, int]] = []
    big = b"x" * (3 << 20)  # several chunks: the hook is called once per chunk
    files = [OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
             OutputFile("big.bin", False, source=lambda: io.BytesIO(big), size=len(big))]
    write_output(tmp_path / "out" / "ctx.tar", files, fmt=OutputFormat.TAR,
                 progress=lambda done, total: seen.append((done, total)))
    assert marker.read_bytes() == b"write started\n"
    assert waits == [60]
    total = len(big) + len(corpus.DOCKERFILE)
    assert seen[0] == (0, total) and seen[-1] == (total, total) and len(seen) > 3


def test_without_the_hook_nothing_is_announced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(writer.TEST_WRITE_STARTED, raising=False)
    waits: list[float] = []
    monkeypatch.setattr(writer.time, "sleep", waits.append)
    write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
    assert waits == []
