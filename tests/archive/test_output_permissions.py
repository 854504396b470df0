"""The archive file itself gets the modes the umask allows, like any file the user creates."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from patcher.archive import OutputFormat, write_output
from tests.fixtures_archives import corpus_files


def test_the_archive_file_itself_gets_the_modes_the_umask_allows(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_output(tmp_path / "ctx.tar", corpus_files(), fmt=OutputFormat.TAR)
        os.umask(0o002)
        write_output(tmp_path / "ctx.zip", corpus_files(), fmt=OutputFormat.ZIP)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "ctx.tar").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "ctx.zip").stat().st_mode) == 0o664
