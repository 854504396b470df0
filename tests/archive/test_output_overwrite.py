"""An existing output is kept unless --force, which replaces a file or a folder.

An output another run made meanwhile is kept even so.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.errors import OutputError
from tests.fixtures_archives import SUFFIX, corpus, corpus_files, expected, read_back, sample_files


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_existing_output_is_kept_without_force(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    dest.write_bytes(b"precious")
    with pytest.raises(OutputError, match="exists; pass --force to overwrite"):
        write_output(dest, sample_files(), fmt=fmt)
    assert dest.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [dest.name]


def test_an_existing_output_is_named(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar.gz"
    dest.write_bytes(b"yesterday's build\n")
    with pytest.raises(OutputError) as caught:
        write_output(dest, corpus_files(), fmt=OutputFormat.TAR_GZ)
    assert str(caught.value) == f"{dest}: exists; pass --force to overwrite"


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("old", ["file", "folder"])
def test_force_replaces_a_file_or_a_folder(tmp_path: Path, fmt: OutputFormat, old: str) -> None:
    dest = tmp_path / SUFFIX[fmt]
    if old == "file":
        dest.write_bytes(b"old")
    else:
        (dest / "stale").mkdir(parents=True)
        (dest / "stale" / "x").write_bytes(b"old")
    write_output(dest, sample_files(), fmt=fmt, force=True)
    assert read_back(dest, fmt) == expected()
    assert sorted(p.name for p in tmp_path.iterdir()) == [dest.name]


def test_an_output_made_by_another_run_meanwhile_is_kept(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"

    def other_run_finishes_first() -> io.BytesIO:
        dest.write_bytes(b"the other run's output\n")
        return io.BytesIO(corpus.SCRIPT)

    files = [OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
             OutputFile("run.sh", True, source=other_run_finishes_first, size=len(corpus.SCRIPT))]
    with pytest.raises(OutputError) as caught:
        write_output(dest, files, fmt=OutputFormat.TAR)
    assert str(caught.value) == f"{dest}: exists; pass --force to overwrite"
    assert dest.read_bytes() == b"the other run's output\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ctx.tar"]
