"""What ``check PATH`` reads: one Python file, a vendor zip, a folder, a build context tar; what it refuses to read."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from patcher.checks.inputs import check_path
from patcher.errors import BadArchive

from tests.fixtures_rules import POLICY
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE
from make_bad_archives import TOP, Member, corrupt_data, with_base  # fixtures/, put on sys.path by fixtures_vendor

KERNEL_IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
REASON = "lab card, Triton build under test (ticket 42)"


def _rows(result) -> list[tuple[str, str, str, int]]:  # type: ignore[no-untyped-def]
    return [(v.rule, v.severity.value, v.path, v.line) for v in result.violations]


def test_one_python_file_gets_the_file_rules_and_the_overrides_given(tmp_path: Path) -> None:
    script = tmp_path / "prefill.py"
    script.write_text("# a hurried local copy\r\n" + KERNEL_IMPORT)
    plain = check_path(script, POLICY)
    assert _rows(plain) == [("no-triton-kernels", "error", str(script), 2)]
    assert len(plain.errors) == 1 and plain.allowed == {}
    allowed = check_path(script, POLICY, allowed=[("no-triton-kernels", REASON)])
    assert allowed.allowed == {"no-triton-kernels": REASON}
    assert allowed.errors == () and [v.line for v in allowed.overridden] == [2]


def test_a_shipped_file_that_cannot_be_read_is_reported_as_a_bad_archive(tmp_path: Path) -> None:
    name = TOP + "scripts/broken.py"
    source = tmp_path / "vendor-demo.zip"
    source.write_bytes(corrupt_data(with_base(Member(name, b"LEVEL = 2\n" * 20, method=zipfile.ZIP_STORED)),
                                    name, at=5))
    with pytest.raises(BadArchive, match="fails its CRC check"):
        check_path(source, POLICY)


def _context_tar(path: Path, mode: str, extra: tuple[str, bytes] | None = None) -> Path:
    with tarfile.open(path, mode) as archive:
        archive.add(VENDOR_TREE, arcname=".")
        if extra is not None:
            info = tarfile.TarInfo(extra[0])
            info.size = len(extra[1])
            archive.addfile(info, io.BytesIO(extra[1]))
    return path


@pytest.mark.parametrize("name, mode", [("ctx.tar", "w"), ("ctx.tgz", "w:gz"), ("ctx.tar.gz", "w:gz")])
def test_a_build_context_tar_is_unpacked_and_checked_like_its_folder(tmp_path: Path, name: str, mode: str) -> None:
    tar = _context_tar(tmp_path / name, mode)
    assert check_path(tar, POLICY, targets=[SHIPPED]).violations == \
        check_path(VENDOR_TREE, POLICY, targets=[SHIPPED]).violations


def test_a_tar_member_outside_the_folder_is_refused(tmp_path: Path) -> None:
    tar = _context_tar(tmp_path / "ctx.tar", "w", ("../outside.py", b"x = 1\n"))
    with pytest.raises(BadArchive) as raised:
        check_path(tar, POLICY)
    assert raised.value.where == tar.name
    assert raised.value.message == "member '../outside.py' escapes the tree with a '..' component"
    assert not (tmp_path / "outside.py").exists()


def test_a_tar_that_is_not_one_is_a_bad_archive(tmp_path: Path) -> None:
    tar = tmp_path / "ctx.tar.gz"
    tar.write_bytes(b"\x1f\x8b\x08\x00 truncated by a hurried scp")
    with pytest.raises(BadArchive) as raised:
        check_path(tar, POLICY)
    assert raised.value.where == tar.name and raised.value.message.startswith("the gzip stream is corrupt")


def test_a_python_without_the_tar_data_filter_reads_a_tar_all_the_same(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    tar = _context_tar(tmp_path / "ctx.tar", "w")
    monkeypatch.delattr(tarfile, "data_filter")  # as on Python 3.10.11 and older: the reader parses tars itself
    assert check_path(tar, POLICY, targets=[SHIPPED]).violations == \
        check_path(VENDOR_TREE, POLICY, targets=[SHIPPED]).violations
