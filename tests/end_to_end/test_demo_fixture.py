"""The demo vendor zip the walkthroughs run on: a fresh, reproducible build of its tree.

It keeps the vendor's quirks: CRLF and no final newline in the Dockerfile, an executable
patch_ops.sh without a shebang or 'set -e', a stale CRLF root copy of paged_attn.py, a BOM, a
file without a final newline, a binary.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from tests.fixtures_vendor import VENDOR_TREE, VENDOR_ZIP, build_zip


TOP = "enginex-vllm-bi100-qwen36-main/"


@pytest.fixture(scope="module")
def archive() -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(VENDOR_ZIP.read_bytes()))


def test_committed_zip_is_a_fresh_build(tmp_path: Path) -> None:
    out = tmp_path / "fresh.zip"
    build_zip(VENDOR_TREE, out)
    assert out.read_bytes() == VENDOR_ZIP.read_bytes(), (
        "fixtures/enginex-vllm-bi100-qwen36-main.zip is stale: "
        "run 'python fixtures/build_demo_zip.py' and commit the zip")


def test_build_is_reproducible(tmp_path: Path) -> None:
    build_zip(VENDOR_TREE, tmp_path / "a.zip")
    build_zip(VENDOR_TREE, tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()


def test_zip_holds_the_tree_byte_for_byte(archive: zipfile.ZipFile) -> None:
    files = {TOP + p.relative_to(VENDOR_TREE).as_posix(): p.read_bytes()
             for p in VENDOR_TREE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    members = {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}
    assert members == files
    assert all(name.startswith(TOP) for name in archive.namelist())


def test_zip_entries_are_normalised(archive: zipfile.ZipFile) -> None:
    infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.create_system for i in infos} == {3}
    dirs = {i.filename for i in infos if i.is_dir()}
    assert {TOP, TOP + "qwen3_6_scripts/", TOP + "vllm/attention/ops/"} <= dirs
    for info in infos:
        mode = info.external_attr >> 16
        if info.is_dir():
            assert mode == 0o40755, info.filename
        else:
            assert mode in (0o100644, 0o100755), info.filename
            assert info.compress_type == zipfile.ZIP_DEFLATED


def test_dockerfile_is_crlf_without_final_newline(archive: zipfile.ZipFile) -> None:
    data = archive.read(TOP + "Dockerfile")
    assert not data.endswith(b"\n")
    lines = data.split(b"\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert [line.split(b" ", 1)[0] for line in lines] == [b"FROM", b"RUN", b"WORKDIR", b"COPY", b"RUN"]
    assert b"py3.10" in lines[0]
    assert lines[3] == b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts"
    assert lines[4] == b"RUN cd ./qwen3_6_scripts && ./patch_ops.sh"


def test_patch_ops_is_executable_without_shebang(archive: zipfile.ZipFile) -> None:
    info = archive.getinfo(TOP + "qwen3_6_scripts/patch_ops.sh")
    assert (info.external_attr >> 16) == 0o100755
    assert (archive.getinfo(TOP + "launch_service").external_attr >> 16) == 0o100755
    assert (archive.getinfo(TOP + "qwen3_6_scripts/paged_attn.py").external_attr >> 16) == 0o100644
    text = archive.read(info).decode()
    assert not text.startswith("#!")
    assert "\r" not in text
    assert "set -e" not in text
    assert ("cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/"
            "vllm/attention/ops/paged_attn.py") in text.splitlines()


def test_root_paged_attn_is_a_stale_crlf_copy(archive: zipfile.ZipFile) -> None:
    root = archive.read(TOP + "paged_attn.py")
    shipped = archive.read(TOP + "qwen3_6_scripts/paged_attn.py")
    assert root != shipped
    assert root.count(b"\n") == root.count(b"\r\n") > 150
    assert b"\r" not in shipped
    assert b"if HAS_TRITON:\r\n    from vllm.attention.ops.prefix_prefill import context_attention_fwd" in root
    assert b"        context_attention_fwd(\r\n" in root
    assert b"\n        context_attention_fwd(" not in shipped.replace(b"# from", b"")


def test_text_oddities_survive(archive: zipfile.ZipFile) -> None:
    assert archive.read(TOP + "qwen3_6_scripts/chat_template.jinja").startswith(b"\xef\xbb\xbf")
    assert not archive.read(TOP + "vllm/version.py").endswith(b"\n")
    binary = archive.read(TOP + "vllm/_C.abi3.so")
    assert 4096 <= len(binary) <= 20480
    assert b"\x00" in binary and b"\r\n" in binary
