"""A folder output has modes 0644/0755 and the one time on every entry, whatever the umask."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from patcher.archive import OutputFormat, write_output
from tests.fixtures_archives import corpus, corpus_files, sample_files


def test_directory_output_has_fixed_times(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    write_output(dest, sample_files(), fmt=OutputFormat.DIRECTORY, mtime=1_700_000_000)
    for item in [dest, *dest.rglob("*")]:
        assert item.stat().st_mtime == 1_700_000_000, item


def test_a_folder_output_has_normalised_modes_and_times_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        digest = write_output(tmp_path / "ctx", corpus_files(), fmt=OutputFormat.DIRECTORY, mtime=1_700_000_000)
    finally:
        os.umask(old)
    found = {
        p.relative_to(tmp_path / "ctx").as_posix(): (stat.S_IMODE(p.stat().st_mode), p.stat().st_mtime)
        for p in [tmp_path / "ctx", *(tmp_path / "ctx").rglob("*")]
    }
    assert found == {
        ".": (0o755, 1_700_000_000),
        "Dockerfile": (0o644, 1_700_000_000),
        "scripts": (0o755, 1_700_000_000),
        "scripts/run.sh": (0o755, 1_700_000_000),
    }
    listing = "".join(
        f"{mode:04o} {hashlib.sha256(data).hexdigest()} {path}\n"
        for path, mode, data in (("Dockerfile", 0o644, corpus.DOCKERFILE), ("scripts/run.sh", 0o755, corpus.SCRIPT))
    )
    assert digest == hashlib.sha256(listing.encode()).hexdigest()
