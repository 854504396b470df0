"""The output's format follows the destination's name: .tar.gz, .tgz, .tar, .zip, else a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.archive import OutputFormat


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("ctx.tar.gz", OutputFormat.TAR_GZ),
        ("CTX.TGZ", OutputFormat.TAR_GZ),
        ("ctx.tar", OutputFormat.TAR),
        ("ctx.zip", OutputFormat.ZIP),
        ("ctx", OutputFormat.DIRECTORY),
        ("ctx.gz", OutputFormat.DIRECTORY),
    ],
)
def test_format_follows_the_destination_name(name: str, fmt: OutputFormat) -> None:
    assert OutputFormat.for_path(Path("out") / name) is fmt
