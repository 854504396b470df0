"""Tar entries are sorted and owned by root with empty names; the gzip header names no file and no time."""

from __future__ import annotations

import tarfile
from pathlib import Path

from patcher.archive import OutputFormat, write_output
from patcher.archive.layout import plan
from patcher.archive.tar_format import write_tar
from tests.fixtures_archives import PREFIX, sample_files


def test_tar_entries_are_sorted_owned_by_root_and_unnamed(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR, zip_prefix=PREFIX, mtime=1_700_000_000)
    with tarfile.open(dest) as archive:
        members = archive.getmembers()
    names = [m.name + ("/" if m.isdir() else "") for m in members]
    assert names == sorted(names)
    assert names[0] == "Dockerfile"  # at the root, for 'docker build - < ctx.tar'
    for member in members:
        assert (member.uid, member.gid, member.uname, member.gname) == (0, 0, "", "")
        assert member.mtime == 1_700_000_000
    # Folders come right before their contents.
    assert names.index("qwen3_6_scripts/") + 1 == names.index("qwen3_6_scripts/paged_attn.py")


def test_gzip_header_has_no_name_and_no_time(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar.gz"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR_GZ, mtime=1_700_000_000)
    header = dest.read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] == 0  # FLG: no FNAME, no comment, no extra
    assert header[4:8] == b"\0\0\0\0"  # MTIME
    assert b"ctx.tar" not in dest.read_bytes()


def test_gzip_header_stays_nameless_on_a_named_file(tmp_path: Path) -> None:
    # GzipFile records fileobj.name unless told otherwise; write_output's
    # own handle has no name, so check the packer on a file that has one.
    with open(tmp_path / "named.tar.gz", "wb") as out:
        write_tar(out, plan(sample_files()), 0, gz=True)
    header = (tmp_path / "named.tar.gz").read_bytes()[:10]
    assert header[3] == 0 and header[4:8] == b"\0\0\0\0"
