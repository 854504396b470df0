"""A member whose data or local header is corrupt is refused when it is read.

The CRC is checked once the declared size is reached, before a consumer that reads exactly that
many bytes has them all.
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive
from tests.fixtures_archives import DOCKERFILE, PAGED, TOP, corpus, corpus_zip, zip_of
from tests.fixtures_vendor import FIXTURES


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


def test_a_corrupt_local_header_is_reported_with_zipfiles_reason(tmp_path: Path) -> None:
    path = corpus_zip(tmp_path / "v.zip")
    data = bytearray(path.read_bytes())
    name = (TOP + "scripts/run.sh").encode()
    local = data.index(name) - 30  # the local header comes before the central entry
    assert data[local : local + 4] == b"PK\x03\x04"
    data[local : local + 4] = b"PK\x00\x00"
    path.write_bytes(bytes(data))
    with ZipSource(path) as source, pytest.raises(BadArchive) as caught:
        source.read("scripts/run.sh")
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/run.sh' is corrupt (Bad magic number for file header)"
        " (download the zip again)"
    )


def test_local_header_name_that_is_not_utf8_is_corrupt(tmp_path: Path) -> None:
    # The central directory says UTF-8 and holds a valid name; the local header does not.
    path = zip_of(tmp_path / "v.zip", {"top/Dockerfile": DOCKERFILE, "top/\u00e9.py": PAGED})
    data = path.read_bytes()
    at = data.index("top/\u00e9.py".encode())  # the local header comes first
    path.write_bytes(data[: at + 4] + b"\xff\xfe" + data[at + 6 :])
    with ZipSource(path) as source, pytest.raises(BadArchive, match="'top/\u00e9.py' is corrupt"):
        source.read("\u00e9.py")


def test_a_member_running_past_the_end_of_the_file_names_the_error(tmp_path: Path) -> None:
    # The last member's headers claim 100,000 stored bytes; the file ends long
    # before. zipfile raises a bare EOFError, whose text is empty: the message
    # names the error's type instead of showing '()'. Newer Pythons catch the
    # overrun earlier, as entries overlapping the central directory.
    name = TOP + "scripts/data.txt"
    data = bytearray(corpus.with_base(corpus.Member(name, b"0123456789" * 10, method=zipfile.ZIP_STORED)))
    local, central = corpus._headers(bytes(data), name.encode())
    for header, sizes_at in ((local, 18), (central, 20)):
        data[header.at + sizes_at : header.at + sizes_at + 8] = struct.pack("<II", 100_000, 100_000)
    path = tmp_path / "v.zip"
    path.write_bytes(bytes(data))
    with ZipSource(path) as source, pytest.raises(BadArchive) as caught:
        source.read("scripts/data.txt")
    assert str(caught.value) in {
        f"v.zip: member '{name}' is corrupt ({detail}) (download the zip again)"
        for detail in ("EOFError", "Overlapped entries")
    }
