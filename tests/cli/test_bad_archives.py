"""Every zip of the bad-archive corpus stops apply with exit 2, one error line and nothing written.

--verbose adds the traceback and changes nothing else.
"""

from __future__ import annotations

import zipfile

import pytest

from tests.fixtures_archives import CASES
from tests.fixtures_vendor import FIXTURES


def test_the_corpus_base_tree_applies(cli, tiny_patches, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(FIXTURES / "bad" / "bad_crc.zip") as broken, zipfile.ZipFile(good, "w") as out:
        for info in broken.infolist():
            if not info.filename.endswith("data.txt"):
                out.writestr(info, broken.read(info))
    result = cli("apply", good, "-o", "ctx.tar", "--patches", tiny_patches)
    assert result.exit_code == 0, result.stderr
    assert "applied          raise-level" in result.stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_archive_is_one_line_exit_2_and_no_output(cli, tiny_patches, name: str) -> None:  # type: ignore[no-untyped-def]
    source = FIXTURES / "bad" / name
    before = source.read_bytes()
    result = cli("apply", source, "-o", "out/ctx.tar.gz", "--patches", tiny_patches)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert CASES[name].expect in result.stderr
    assert "Traceback" not in result.stderr
    assert list(cli.cwd.iterdir()) == []  # no output, no temporary, no parent folder left
    assert source.read_bytes() == before


def test_verbose_shows_the_traceback(cli, tiny_patches) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", FIXTURES / "bad" / "symlink.zip", "-o", "x.tar", "--patches", tiny_patches, "--verbose")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert list(cli.cwd.iterdir()) == []  # --verbose changes what is shown, not what is written
