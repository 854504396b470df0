"""A zip declaring more members than the limit is refused from its end record, before zipfile parses it.

The count is read from the vendor zip's own end record (zip64 too), never from a wheel stored
inside it, and is checked again against the central directory when the end record understates it.
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from patcher.archive import Limits, open_source
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive
from tests.fixtures_archives import corpus, corpus_zip, zip_refusal


def _too_many(declared: int, limit: int) -> str:
    """The refusal of v.zip declaring DECLARED members past a limit of LIMIT, naming the option that raises it."""
    return (f"v.zip: zip declares {declared} members, more than the limit of {limit}"
            " (if the archive is trusted, raise the limit with --max-members)")


def _set_declared_count(data: bytes, count: int) -> bytes:
    """Return DATA with the end record's two entry counts set to COUNT."""
    end = data.rindex(b"PK\x05\x06")
    return data[: end + 8] + struct.pack("<HH", count, count) + data[end + 12 :]


def test_too_many_members_is_refused(small_vendor_zip: Path) -> None:
    with pytest.raises(BadArchive, match="declares 7 members, more than the limit of 3"):
        with open_source(small_vendor_zip, Limits(max_members=3)):
            pass


def test_too_many_members_says_which_limit_to_raise(tmp_path: Path) -> None:
    path = corpus_zip(tmp_path / "v.zip")
    assert zip_refusal(path, Limits(max_members=4)) == _too_many(5, 4)


def test_exactly_the_member_limit_is_allowed(tmp_path: Path) -> None:
    with ZipSource(corpus_zip(tmp_path / "v.zip"), Limits(max_members=5)) as source:
        assert len(source.files()) == 3


def test_an_end_record_that_understates_the_members_is_counted_again(tmp_path: Path) -> None:
    # zipfile reads the central directory by its size, not by the count the
    # end record gives: five entries are found although it declares two.
    path = tmp_path / "v.zip"
    path.write_bytes(_set_declared_count(corpus.with_base(), 2))
    with zipfile.ZipFile(path) as archive:
        assert len(archive.infolist()) == 5
    assert zip_refusal(path, Limits(max_members=4)) == _too_many(5, 4)
    with ZipSource(path, Limits(max_members=5)) as source:
        assert [f.path for f in source.files()] == ["Dockerfile", "scripts/run.sh", "scripts/tool.py"]


def test_an_end_record_that_overstates_the_members_is_refused_before_parsing(tmp_path: Path) -> None:
    # Refusing from the end record alone keeps zipfile from building an
    # object per entry of a zip declaring millions of them.
    path = tmp_path / "v.zip"
    path.write_bytes(_set_declared_count(corpus.with_base(), 60_000))
    assert zip_refusal(path) == _too_many(60000, 50000)


def _as_zip64(data: bytes, declared: int) -> bytes:
    """Return DATA with a zip64 end record and locator declaring DECLARED entries, as zip tools write past 65,535."""
    end = data.rindex(b"PK\x05\x06")
    size_cd, offset_cd = struct.unpack("<LL", data[end + 12 : end + 20])
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, declared, declared, size_cd, offset_cd)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    eocd = data[end : end + 8] + struct.pack("<HH", 0xFFFF, 0xFFFF) + data[end + 12 :]
    return data[:end] + record + locator + eocd


def test_a_zip64_end_record_declaring_too_many_members_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(_as_zip64(corpus.with_base(), 70_000))
    assert zipfile.is_zipfile(path)  # a valid zip64 end record: only its count is hostile
    assert zip_refusal(path) == _too_many(70000, 50000)


def test_a_zip64_end_record_is_read_exactly(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(_as_zip64(corpus.with_base(), 5))
    with ZipSource(path, Limits(max_members=5)) as source:
        assert [f.path for f in source.files()] == ["Dockerfile", "scripts/run.sh", "scripts/tool.py"]
    path.write_bytes(_as_zip64(corpus.with_base(), 6))
    with pytest.raises(BadArchive, match=r"^v\.zip: zip declares 6 members, more than the limit of 5 "):
        ZipSource(path, Limits(max_members=5))


def _wheel(members: int) -> bytes:
    """Return a small wheel: a zip of ``members`` kernel modules plus its RECORD."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for i in range(members - 1):
            wheel.writestr(f"vllm_kernels/ops/kernel_{i}.py", f"# generated kernel {i}\nBLOCK = {16 << i % 4}\n")
        wheel.writestr("vllm_kernels-0.6.3.dist-info/RECORD", "vllm_kernels/ops/kernel_0.py,,\n")
    return buffer.getvalue()


def _vendor_zip(path: Path) -> Path:
    """Write a vendor drop whose wheel is stored (zip -n .whl) near the end, so its end record is in the tail."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("engine/Dockerfile", "FROM nvcr.io/nvidia/pytorch:24.05-py3\r\nRUN pip install /wheels/*.whl\r\n")
        archive.writestr("engine/wheels/vllm_kernels-0.6.3-cp311-cp311-linux_x86_64.whl", _wheel(12),
                         compress_type=zipfile.ZIP_STORED)
        archive.writestr("engine/README.md", "# Engine\n\nBuild with `docker build .`\n")
    return path


def test_the_member_count_comes_from_the_vendor_zip_not_from_a_stored_wheel_inside(tmp_path: Path) -> None:
    path = _vendor_zip(tmp_path / "v.zip")
    data = path.read_bytes()
    # Two end records in the file's tail: the wheel's (12 members) first, the vendor zip's (3) last.
    assert data.count(b"PK\x05\x06") == 2
    with ZipSource(path, Limits(max_members=3)) as source:
        assert sorted(f.path for f in source.files()) == [
            "Dockerfile", "README.md", "wheels/vllm_kernels-0.6.3-cp311-cp311-linux_x86_64.whl"]
    assert zip_refusal(path, Limits(max_members=2)) == _too_many(3, 2)
