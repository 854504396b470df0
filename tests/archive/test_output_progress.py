"""Writing reports its progress through a callback, and the output does not depend on it."""

from __future__ import annotations

import hashlib
import io
from functools import partial
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.archive.layout import CHUNK

BIG = bytes(range(256)) * (3 * CHUNK // 256 + 7)  # a few chunks and a bit
FILES = {"Dockerfile": b"FROM base\n", "wheels/big.whl": BIG, "empty.txt": b""}
NAMES = {
    OutputFormat.TAR: "ctx.tar",
    OutputFormat.TAR_GZ: "ctx.tar.gz",
    OutputFormat.ZIP: "ctx.zip",
    OutputFormat.DIRECTORY: "ctx",
}


def files() -> list[OutputFile]:
    return [
        OutputFile("Dockerfile", False, data=FILES["Dockerfile"]),
        OutputFile("wheels/big.whl", False, source=partial(io.BytesIO, BIG), size=len(BIG)),
        OutputFile("empty.txt", False, source=partial(io.BytesIO, b""), size=0),
    ]


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_progress_counts_content_up_to_the_total(tmp_path: Path, fmt: OutputFormat) -> None:
    calls: list[tuple[int, int]] = []
    quiet = write_output(tmp_path / "a" / NAMES[fmt], files(), fmt=fmt)
    reported = write_output(tmp_path / "b" / NAMES[fmt], files(), fmt=fmt,
                            progress=lambda done, total: calls.append((done, total)))
    assert reported == quiet  # same digest with or without a listener
    total = sum(len(data) for data in FILES.values())
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    done = [d for d, _ in calls]
    assert done == sorted(done) and len(calls) >= 4  # the big file reports chunk by chunk
    assert {t for _, t in calls} == {total}


def test_a_failing_listener_leaves_no_output(tmp_path: Path) -> None:
    def stop(done: int, total: int) -> None:
        if done > CHUNK:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_output(tmp_path / "ctx.tar.gz", files(), fmt=OutputFormat.TAR_GZ, progress=stop)
    assert list(tmp_path.iterdir()) == []


def test_digest_is_of_the_archive_bytes(tmp_path: Path) -> None:
    digest = write_output(tmp_path / "ctx.tar.gz", files(), fmt=OutputFormat.TAR_GZ, progress=lambda d, t: None)
    assert digest == hashlib.sha256((tmp_path / "ctx.tar.gz").read_bytes()).hexdigest()
