"""write_output returns the sha256 of the archive it wrote, or of a sorted listing for a folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from patcher.archive import OutputFormat, write_output
from tests.fixtures_archives import ARCHIVES, CONTENT, SUFFIX, sample_files


@pytest.mark.parametrize("fmt", ARCHIVES, ids=lambda f: f.name)
def test_returned_digest_is_the_archive_sha256(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    digest = write_output(dest, sample_files(), fmt=fmt)
    assert digest == hashlib.sha256(dest.read_bytes()).hexdigest()


def test_directory_digest_is_over_the_sorted_listing(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    digest = write_output(dest, sample_files(), fmt=OutputFormat.DIRECTORY)
    listing = "".join(
        f"{0o755 if x else 0o644:04o} {hashlib.sha256(d).hexdigest()} {p}\n"
        for p, (d, x) in sorted(CONTENT.items())
    )
    assert digest == hashlib.sha256(listing.encode()).hexdigest()
