"""What is written comes back out in every format: contents, modes, folders, the zip's top folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.archive import OutputFormat, open_source, write_output
from tests.fixtures_archives import CONTENT, PREFIX, SUFFIX, expected, read_back, sample_files


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_round_trip_keeps_contents_modes_and_folders(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    write_output(dest, sample_files(), fmt=fmt, zip_prefix=PREFIX)
    assert read_back(dest, fmt) == expected(PREFIX if fmt is OutputFormat.ZIP else "")


def test_zip_output_reads_back_as_a_source_with_the_same_layout(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.zip"
    write_output(dest, sample_files(), fmt=OutputFormat.ZIP, zip_prefix=PREFIX)
    with open_source(dest) as tree:
        assert getattr(tree, "prefix") == PREFIX
        assert {f.path: (tree.read(f.path), f.executable) for f in tree.files()} == CONTENT
