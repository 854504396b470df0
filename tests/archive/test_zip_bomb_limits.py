"""Zip bombs are refused: too much declared data, a member that would expand too many times, one that
expands past its declared size, and (the backstop) members that together expand past the limit.

Each limit holds at its boundary, and a real vendor drop (1,400 members, a 40 MB wheel, text that
compresses very well) passes the defaults.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from patcher.archive import Limits, open_source
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive
from tests.fixtures_archives import CASES, DOCKERFILE, TOP, corpus, corpus_zip, members_zip, vendor_members, zip_of
from tests.fixtures_vendor import FIXTURES


def test_too_much_declared_data_is_refused(small_vendor_zip: Path) -> None:
    with pytest.raises(BadArchive, match="more than 100 bytes in all: possible zip bomb"):
        with open_source(small_vendor_zip, Limits(max_total_size=100)):
            pass


def test_declared_total_size_says_which_limit_to_raise(tmp_path: Path) -> None:
    path = corpus_zip(tmp_path / "v.zip")
    total = len(corpus.DOCKERFILE) + len(corpus.SCRIPT) + len(b"LEVEL = 1\n")
    with ZipSource(path, Limits(max_total_size=total)):
        pass  # exactly the limit is allowed
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(max_total_size=total - 1))
    assert str(caught.value) == (
        f"v.zip: members declare more than {total - 1} bytes in all: possible zip bomb"
        " (if the archive is trusted, raise the limit with --max-size)"
    )


def test_a_member_of_exactly_the_minimum_size_is_ratio_checked(tmp_path: Path) -> None:
    limits = Limits()
    path = corpus_zip(tmp_path / "v.zip", corpus.Member(TOP + "scripts/blank.txt", b"\n" * limits.ratio_min_size))
    with pytest.raises(BadArchive, match=r"'vendor-demo/scripts/blank.txt' would expand \d+ times \(limit 100\)"):
        ZipSource(path, limits)
    with ZipSource(path, Limits(ratio_min_size=limits.ratio_min_size + 1)) as source:
        assert source.read("scripts/blank.txt") == b"\n" * limits.ratio_min_size


def test_a_stored_member_expands_exactly_once(tmp_path: Path) -> None:
    # Stored data is as large on disk as it expands to: a ratio of exactly 1
    # stays within a limit of 1.
    members = [
        corpus.Member(TOP + "Dockerfile", corpus.DOCKERFILE, method=zipfile.ZIP_STORED),
        corpus.Member(TOP + "scripts/data.txt", b"payload " * 20, method=zipfile.ZIP_STORED),
    ]
    path = members_zip(tmp_path / "v.zip", members)
    with ZipSource(path, Limits(max_ratio=1, ratio_min_size=0)) as source:
        assert source.read("scripts/data.txt") == b"payload " * 20


def test_a_one_byte_member_that_declares_150_is_refused_with_its_ratio(tmp_path: Path) -> None:
    name = TOP + "scripts/data.txt"
    stored = corpus.with_base(corpus.Member(name, b"x", method=zipfile.ZIP_STORED))
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.patch(stored, name, file_size=150))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(ratio_min_size=100))
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/data.txt' would expand 150 times (limit 100):"
        " possible zip bomb (if the archive is trusted, raise the limit with --max-ratio)"
    )


def test_lying_size_is_caught_before_the_data_is_all_inflated() -> None:
    # The member inflates to 2 MiB; reading must stop near its declared 1000.
    case = CASES["bomb_lying_size.zip"]
    with open_source(FIXTURES / "bad" / case.name) as tree:
        stream = tree.open(case.read)
        got = bytearray()
        with pytest.raises(BadArchive, match="possible zip bomb"):
            while True:
                block = stream.read(100)
                if not block:
                    break
                got += block
        assert len(got) <= 1000


BIG = b"first member, read twice\n" * 8


SMALL = b"second, smaller\n"


def _two_members(tmp_path: Path) -> Path:
    return corpus_zip(
        tmp_path / "v.zip",
        corpus.Member(TOP + "scripts/big.txt", BIG),
        corpus.Member(TOP + "scripts/small.txt", SMALL),
    )


def test_the_backstop_counts_a_member_read_twice_once(tmp_path: Path) -> None:
    # The limits checked on opening make the backstop unreachable; lowering
    # the limit afterwards stands in for those checks being loosened.
    with ZipSource(_two_members(tmp_path)) as source:
        source._limits = Limits(max_total_size=len(BIG) + len(SMALL))
        assert source.read("scripts/big.txt") == BIG
        assert source.read("scripts/big.txt") == BIG
        assert source.read("scripts/small.txt") == SMALL  # exactly the limit: allowed


def test_the_backstop_trips_on_the_member_that_passes_the_limit(tmp_path: Path) -> None:
    with ZipSource(_two_members(tmp_path)) as source:
        limit = len(BIG) + len(SMALL) - 1
        source._limits = Limits(max_total_size=limit)
        assert source.read("scripts/big.txt") == BIG
        with pytest.raises(BadArchive) as caught:
            source.read("scripts/small.txt")
    assert str(caught.value) == (
        f"v.zip: members expanded past the limit of {limit} bytes while reading"
        " 'scripts/small.txt': possible zip bomb (if the archive is trusted, raise the limit with --max-size)"
    )


def test_small_members_may_compress_very_well(tmp_path: Path) -> None:
    members = vendor_members("t/")
    members["t/blank.txt"] = b"\n" * (512 << 10)  # 512 KiB, ratio ~500:1
    with open_source(zip_of(tmp_path / "t.zip", members)) as tree:
        assert tree.read("blank.txt") == b"\n" * (512 << 10)


def test_large_vendor_sized_zip_passes_default_limits(tmp_path: Path) -> None:
    # About the real zip's shape: 1,400 members and a 40 MB incompressible
    # wheel. Stored, so the test spends its time reading, not compressing.
    path = tmp_path / "big.zip"
    wheel = os.urandom(40 << 20)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("big/Dockerfile", DOCKERFILE)
        for i in range(1400):
            archive.writestr(f"big/vllm/m{i:04}.py", f"x = {i}\n" * 200, zipfile.ZIP_DEFLATED)
        archive.writestr("big/wheels/engine.whl", wheel)
    with open_source(path) as tree:
        assert len(tree.files()) == 1402
        digest = hashlib.sha256()
        with tree.open("wheels/engine.whl") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        assert digest.hexdigest() == hashlib.sha256(wheel).hexdigest()
