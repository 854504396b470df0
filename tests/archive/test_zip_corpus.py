"""Every zip of the committed corpus of broken and malicious archives is refused with its own line.

The corpus (``fixtures/bad/``) is what ``fixtures/make_bad_archives.py`` builds; each zip breaks one
thing in a minimal valid tree. A zip is refused on opening, or, where only a member's data is bad,
when that member is read, by whole reads and streaming reads alike.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.errors import BadArchive
from tests.fixtures_archives import CASES, corpus
from tests.fixtures_vendor import FIXTURES


def test_committed_corpus_is_what_the_script_builds() -> None:
    built = corpus.build_all()
    committed = {p.name: p.read_bytes() for p in (FIXTURES / "bad").iterdir()}
    assert committed == built


def test_corpus_script_writes_into_a_given_folder(tmp_path: Path) -> None:
    assert corpus.main([str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(CASES)


def test_every_corpus_zip_has_an_expected_line() -> None:
    assert sorted(MESSAGES) == sorted(case.name for case in corpus.CASES)


def _methods() -> str:
    """Return the methods this interpreter can decompress, as the message lists them."""
    names = ["stored", "deflate"]
    for module, name in (("bz2", "bzip2"), ("lzma", "lzma")):
        if importlib.util.find_spec(module) is not None:
            names.append(name)
    return ", ".join(names)


# The whole line a user sees for each zip of the corpus: where, what, and
# what to do next. The corpus itself names only a fragment of each.
MESSAGES = {
    "not_a_zip.zip": "not a zip file (pass the vendor .zip or an unpacked folder)",
    "empty_file.zip": "the file is empty, not a zip",
    "truncated.zip": "the zip is truncated or corrupt: its central directory cannot be read"
    " (download it again)",
    "empty_zip.zip": "the zip holds no members",
    "only_folders.zip": "the zip holds only folders, no files",
    "no_dockerfile.zip": "no Dockerfile found (the build context is the folder holding the Dockerfile)",
    "two_contexts.zip": "several candidate build contexts at the same depth:"
    " 'vendor-demo/a/', 'vendor-demo/b/' (keep one folder with a Dockerfile at the top)",
    "outside_context.zip": "member 'vendor-demo/README.md' lies outside the build context"
    " 'vendor-demo/app/' (the folder holding the Dockerfile) (keep one build context per zip)",
    "dotdot.zip": "member 'vendor-demo/../../evil.sh' escapes the tree with a '..' component",
    "absolute.zip": "member '/etc/cron.d/evil.sh' has an absolute path",
    "backslash.zip": "member 'vendor-demo/..\\evil.sh' has a backslash in its name",
    "drive_letter.zip": "member 'C:/Windows/evil.sh' has a drive letter",
    "nul_in_name.zip": "member 'vendor-demo/a\\x00b.txt' has a control character in its name",
    "symlink.zip": "member 'vendor-demo/scripts/link' is a symbolic link; links are not allowed"
    " (re-create the zip without links)",
    "fifo.zip": "member 'vendor-demo/scripts/pipe' is a fifo, not a regular file or folder",
    "device.zip": "member 'vendor-demo/scripts/tty' is a character device, not a regular file or folder",
    "dir_mode_without_slash.zip": "member 'vendor-demo/scripts/sub' is marked as a folder"
    " but its name has no trailing slash",
    "duplicate.zip": "member 'vendor-demo/scripts/run.sh' appears twice",
    "case_collision.zip": "members 'vendor-demo/scripts/RUN.sh' and 'vendor-demo/scripts/run.sh'"
    " differ only in letter case and would collide on case-insensitive file systems"
    " (re-create the zip with one of them renamed: a macOS or Windows checkout keeps only one)",
    "file_and_folder.zip": "member 'vendor-demo/scripts/run.sh' is both a file and a folder",
    "encrypted.zip": "member 'vendor-demo/scripts/run.sh' is encrypted; encrypted zips are not"
    " supported (re-create the zip without a password)",
    "unsupported_method.zip": "member 'vendor-demo/scripts/run.sh' uses unsupported compression"
    f" method 99 (supported: {_methods()}) (re-create the zip with deflate)",
    "non_utf8_name.zip": "member name 'vendor-demo/caf\\xe9.txt' is not ASCII and the zip does"
    " not mark its names as UTF-8, so its encoding is unknown (re-create the zip with UTF-8 names)",
    "bad_utf8_name.zip": "a member name is marked as UTF-8 but is not valid UTF-8 (re-create the zip)",
    "bomb_ratio.zip": "member 'vendor-demo/scripts/zeros.bin' would expand 1023 times (limit 100):"
    " possible zip bomb (if the archive is trusted, raise the limit with --max-ratio)",
    "bomb_overlapping.zip": "members 'vendor-demo/scripts/a.txt' and 'vendor-demo/scripts/b.txt'"
    " share the same data: possible zip bomb",
    "bomb_lying_size.zip": "member 'vendor-demo/scripts/data.bin' expands beyond its declared size"
    " of 1000 bytes: possible zip bomb",
    "short_member.zip": "member 'vendor-demo/scripts/data.txt' holds 100 bytes, fewer than the 110"
    " it declares (truncated or corrupt) (download the zip again)",
    "bad_crc.zip": "member 'vendor-demo/scripts/data.txt' fails its CRC check (the data is corrupt)"
    " (download the zip again)",
    "bad_deflate.zip": "member 'vendor-demo/scripts/data.txt' is corrupt (Error -3 while"
    " decompressing data: invalid block type) (download the zip again)",
}


@pytest.mark.parametrize("case", corpus.CASES, ids=lambda case: case.name)
def test_each_bad_zip_is_refused_with_its_whole_line(case: object) -> None:
    source = FIXTURES / "bad" / case.name  # type: ignore[attr-defined]
    before = source.read_bytes()
    with pytest.raises(BadArchive) as caught:
        with open_source(source) as tree:
            tree.read(case.read)  # type: ignore[attr-defined]
    assert str(caught.value) == f"{case.name}: {MESSAGES[case.name]}"  # type: ignore[attr-defined]
    assert source.read_bytes() == before  # refused, and never modified


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_zip_is_refused_with_its_own_message(name: str) -> None:
    case = CASES[name]
    path = FIXTURES / "bad" / name
    with pytest.raises(BadArchive) as caught:
        with open_source(path) as tree:
            assert case.read is not None, "opening should have failed"
            tree.read(case.read)
    message = str(caught.value)
    assert case.expect in message
    assert message.startswith(f"{name}: ")
    assert "\n" not in message


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.read))
def test_member_errors_also_stop_streaming_reads(name: str) -> None:
    case = CASES[name]
    with open_source(FIXTURES / "bad" / name) as tree:
        assert tree.exists(case.read)
        with pytest.raises(BadArchive, match="bytes|CRC|corrupt"):
            with tree.open(case.read) as stream:
                while stream.read(4096):
                    pass
