"""The tar is byte for byte what tarfile writes for a PAX archive; the tar.gz is that tar, gzipped.

write_tar skips TarFile.addfile's per-member copy, so its bytes are compared with tarfile's own:
sizes around the 512-byte block and the 10 KiB record, names past ustar's 100 bytes, names that
are not UTF-8 on disk (PAX ``hdrcharset=BINARY``), folders and empty files.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from functools import partial
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.archive.gzip_stream import GzipWriter
from patcher.archive.layout import plan
from patcher.archive.tar_format import write_tar
from tests.fixtures_archives import corpus_files, sample_files, tarfile_reference


MTIME = 315532800  # 1980-01-01, the default time of every output


def write_tar_bytes(files: list[OutputFile]) -> bytes:
    out = io.BytesIO()
    write_tar(out, plan(files), MTIME, gz=False)
    return out.getvalue()


@pytest.mark.parametrize("total", [0, 1, 511, 512, 513, 9 * 512, 10 * 512, 20 * 512 - 1, (1 << 20) + 7])
def test_tar_bytes_are_the_ones_tarfile_writes(total: int) -> None:
    # Sizes around the 512-byte block and the 10 KiB record, a name past the
    # 100 bytes ustar holds (a PAX header), non-ASCII names, folders, an empty file.
    long_name = "qwen3_6_scripts/" + "deeply_nested_folder_name/" * 5 + "paged_attn.py"
    files = [
        OutputFile("Dockerfile", False, data=b"FROM base\r\n"),
        OutputFile("empty.txt", False, data=b""),
        OutputFile(long_name, False, data=b"# long\n" * 3),
        OutputFile("caf\u00e9/\u00fcber.py", True, source=partial(io.BytesIO, b"x" * total), size=total),
        OutputFile("z.bin", False, data=bytes(range(256)) * 3),
    ]
    entries = plan(files)
    ours = io.BytesIO()
    write_tar(ours, entries, 315532800, gz=False)
    assert ours.getvalue() == tarfile_reference(entries, 315532800)
    assert len(ours.getvalue()) % tarfile.RECORDSIZE == 0


def test_a_name_that_is_not_utf8_on_disk_is_written_as_its_bytes_like_tarfile(tmp_path: Path) -> None:
    # A Latin-1 folder and file name, as a Windows-era vendor drop unpacked on Linux holds
    # it: Python sees the bytes it cannot decode as surrogates (os.fsdecode).
    folder = os.fsdecode(b"donn\xe9es")
    name = os.fsdecode(b"donn\xe9es/r\xe9sum\xe9.txt")
    files = [
        OutputFile("Dockerfile", False, data=b"FROM base\r\nCOPY . /workspace/\r\n"),
        OutputFile(name, False, data=b"notes\n"),
    ]
    ours = write_tar_bytes(files)
    assert ours == tarfile_reference(plan(files), MTIME)
    assert b"hdrcharset=BINARY" in ours and b"donn\xe9es/r\xe9sum\xe9.txt" in ours

    write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar", encoding="utf-8", errors="surrogateescape") as archive:
        assert archive.getnames() == ["Dockerfile", folder, name]
        assert [m.isdir() for m in archive.getmembers()] == [False, True, False]
        handle = archive.extractfile(name)
        assert handle is not None and handle.read() == b"notes\n"


def test_members_ending_two_blocks_before_a_record_get_exactly_the_two_end_blocks() -> None:
    # Header (512) + 8704 bytes of content = 9216: the two zero blocks end the 10 KiB record.
    files = [OutputFile("Dockerfile", False, data=b"# vendor Dockerfile\r\n" * 414 + b"FROM x\n" + b"#" * 3)]
    assert len(files[0].data or b"") == 8704
    ours = write_tar_bytes(files)
    assert ours == tarfile_reference(plan(files), MTIME)
    assert len(ours) == tarfile.RECORDSIZE
    assert ours[9216:] == tarfile.NUL * 1024


def test_tar_writes_pax_headers_only_where_needed(tmp_path: Path) -> None:
    ascii_only = [f for f in sample_files() if f.path.isascii()]
    write_output(tmp_path / "a.tar", ascii_only, fmt=OutputFormat.TAR)
    assert b"PaxHeader" not in (tmp_path / "a.tar").read_bytes()
    write_output(tmp_path / "b.tar", sample_files(), fmt=OutputFormat.TAR)
    assert (tmp_path / "b.tar").read_bytes().count(b"PaxHeader") == 1  # the accented name


def test_a_gzipped_tar_holds_the_same_tar_bytes(tmp_path: Path) -> None:
    files = [OutputFile("Dockerfile", False, data=b"FROM x\n" * 1243 + b"#" * 3)]
    assert len(files[0].data or b"") == 8704
    write_output(tmp_path / "ctx.tar.gz", files, fmt=OutputFormat.TAR_GZ)
    assert gzip.decompress((tmp_path / "ctx.tar.gz").read_bytes()) == tarfile_reference(plan(files), MTIME)


def test_the_tar_gz_is_the_tar_gzipped_at_level_five(tmp_path: Path) -> None:
    files = corpus_files() + [OutputFile("vllm/model.py", False, data=b"import torch\n" * 5000)]
    write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR, mtime=0)
    write_output(tmp_path / "ctx.tar.gz", files, fmt=OutputFormat.TAR_GZ, mtime=0)
    tar = (tmp_path / "ctx.tar").read_bytes()
    out = io.BytesIO()
    with GzipWriter(out, 5) as stream:
        stream.write(tar)
    assert (tmp_path / "ctx.tar.gz").read_bytes() == out.getvalue()
