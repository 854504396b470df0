"""Archive behaviours no other test pinned down: entry order beside look-alike names, CRC mid-read.

Each test here fails with a bug that once survived the whole suite (issue 13).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from tests.fixtures_vendor import FIXTURES
from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.archive.layout import plan
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive

# '-' and '.' sort before '/': a plain sort of names would put the folder 'a'
# before 'a-b' and 'a.py' and so apart from its own contents.
LOOK_ALIKES = ["a/x", "a-b", "a.py", "a/b/c", "a0"]
ORDER = ["a-b", "a.py", "a", "a/b", "a/b/c", "a/x", "a0"]


def _files() -> list[OutputFile]:
    return [OutputFile(path, False, data=path.encode()) for path in LOOK_ALIKES]


def test_each_folder_comes_right_before_its_own_contents() -> None:
    names = [entry.name for entry in plan(_files())]
    assert names == ORDER
    for index, name in enumerate(names):
        if name in ("a", "a/b"):  # the folders
            inside = [i for i, other in enumerate(names) if other.startswith(name + "/")]
            assert inside == list(range(index + 1, index + 1 + len(inside))), name


def test_the_tar_holds_entries_in_that_order_with_a_prefix_too(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"
    write_output(dest, _files(), fmt=OutputFormat.TAR, mtime=0)
    with tarfile.open(dest) as tar:
        assert tar.getnames() == ORDER
    assert [e.name for e in plan(_files(), "top/")] == ["top"] + [f"top/{name}" for name in ORDER]


def test_a_bad_crc_is_found_when_exactly_the_declared_size_is_read() -> None:
    # A consumer such as tarfile copies exactly 'size' bytes and never reads
    # to the end of the member: the CRC must be checked when the size is reached.
    with ZipSource(FIXTURES / "bad" / "bad_crc.zip") as source:
        size = next(f.size for f in source.files() if f.path == "scripts/data.txt")
        stream = source.open("scripts/data.txt")
        with pytest.raises(BadArchive, match="'vendor-demo/scripts/data.txt' fails its CRC check"):
            stream.read(size)


def test_a_bad_crc_is_found_in_a_member_larger_than_one_read(tmp_path: Path) -> None:
    import random
    import zipfile
    import zlib

    data = random.Random(13).randbytes(1 << 20)  # 1 MiB that does not compress: several reads
    path = tmp_path / "big_bad_crc.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("top/Dockerfile", "FROM scratch\n")
        archive.writestr("top/big.bin", data)
    raw = bytearray(path.read_bytes())
    good = zlib.crc32(data).to_bytes(4, "little")
    assert raw.count(good) == 2  # local header and central directory
    path.write_bytes(bytes(raw).replace(good, (zlib.crc32(data) ^ 1).to_bytes(4, "little")))
    with ZipSource(path) as source:
        stream = source.open("big.bin")
        got = io.BytesIO()
        with pytest.raises(BadArchive, match="fails its CRC check"):
            while got.tell() < len(data):
                block = stream.read(min(65536, len(data) - got.tell()))
                assert block
                got.write(block)
        assert got.tell() < len(data)  # refused before the last bytes were handed out
