"""``patcher apply`` on the demo vendor zip, start to finish.

The golden shipped copy, the synced mirror, every other file byte for byte with its mode, the
report, idempotence, and each output format.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zipfile

from tests.fixtures_cli import GOLDEN, MANIFEST, tar_files, vendor_files
from tests.fixtures_vendor import SHIPPED


def test_shipped_copy_matches_golden_output(demo_applied) -> None:  # type: ignore[no-untyped-def]
    _, output = demo_applied
    assert tar_files(output)[SHIPPED][1] == GOLDEN.read_bytes()


def test_report_lists_each_patch_mirror_and_output(demo_applied) -> None:  # type: ignore[no-untyped-def]
    result, output = demo_applied
    for patch in ("three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"):
        assert f"applied          {patch}" in result.stderr
    assert "mirror paged_attn.py: differed from qwen3_6_scripts/paged_attn.py; now identical" in result.stderr
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in result.stderr
    assert result.stdout.strip() == "ctx.tar.gz"


def test_untouched_files_are_byte_identical_with_modes(demo_applied) -> None:  # type: ignore[no-untyped-def]
    _, output = demo_applied
    files = tar_files(output)
    vendor = vendor_files()
    changed = {SHIPPED, "paged_attn.py"}
    for path, data in vendor.items():
        if path not in changed:
            assert files[path][1] == data, path
    assert files["Dockerfile"][1].endswith(b"patch_ops.sh")  # CRLF, no final newline kept
    assert b"\r\n" in files["Dockerfile"][1]
    assert files["qwen3_6_scripts/patch_ops.sh"][0] == 0o755
    assert files["launch_service"][0] == 0o755
    assert files["vllm/utils.py"][0] == 0o644
    assert set(files) == set(vendor) | {MANIFEST}


def test_mirror_is_made_identical_to_the_shipped_copy(demo_applied) -> None:  # type: ignore[no-untyped-def]
    _, output = demo_applied
    files = tar_files(output)
    assert files["paged_attn.py"][1] == files[SHIPPED][1]
    assert vendor_files()["paged_attn.py"] != vendor_files()[SHIPPED]


def test_dockerfile_at_archive_root_and_gzip_header_is_clean(demo_applied) -> None:  # type: ignore[no-untyped-def]
    _, output = demo_applied
    with tarfile.open(output) as archive:
        names = archive.getnames()
        assert "Dockerfile" in names
        assert all(m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == "" for m in archive.getmembers())
        assert names == sorted(names)
    header = output.read_bytes()[:10]
    assert header[4:8] == b"\0\0\0\0"  # no timestamp
    assert header[3] & 0x08 == 0  # no file name


def test_apply_on_its_own_output_changes_nothing(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", "first.zip").exit_code == 0
    again = cli("apply", "first.zip", "-o", "second.zip")
    assert again.exit_code == 0, again.stderr
    assert again.stderr.count("already applied  ") == 3
    assert "0 applied, 3 already applied, 0 failed; 0 mirror(s) re-synced" in again.stderr

    def contents(name: str) -> dict[str, bytes]:
        with zipfile.ZipFile(cli.cwd / name) as archive:
            return {i.filename: archive.read(i) for i in archive.infolist() if not i.filename.endswith(MANIFEST)}

    assert contents("first.zip") == contents("second.zip")


def test_zip_output_keeps_the_vendor_layout_and_exec_bits(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", "out.zip").exit_code == 0
    with zipfile.ZipFile(cli.cwd / "out.zip") as archive:
        info = archive.getinfo("enginex-vllm-bi100-qwen36-main/qwen3_6_scripts/patch_ops.sh")
        assert (info.external_attr >> 16) & 0o111
        assert info.date_time >= (1980, 1, 1, 0, 0, 0)
        assert all(n.startswith("enginex-vllm-bi100-qwen36-main/") for n in archive.namelist())


def test_folder_output_holds_the_golden_copy_and_exec_bits(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", "ctx").exit_code == 0
    folder = cli.cwd / "ctx"
    assert (folder / SHIPPED).read_bytes() == GOLDEN.read_bytes()
    assert os.access(folder / "qwen3_6_scripts" / "patch_ops.sh", os.X_OK)


def test_default_output_path_is_printed(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip)
    assert result.exit_code == 0
    assert result.stdout.strip() == "build/enginex-vllm-bi100-qwen36-main.tar.gz"
    assert (cli.cwd / "build" / "enginex-vllm-bi100-qwen36-main.tar.gz").is_file()


def test_set_overrides_a_parameter(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", "ctx.tar", "--set", "three-tier-decode.small_max=4096",
                 "--set", "three-tier-decode.large_threshold=16384")
    assert result.exit_code == 0, result.stderr
    shipped = tar_files(cli.cwd / "ctx.tar")[SHIPPED][1].decode()
    assert "use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in shipped
    assert "_PYTORCH_DECODE_THRESHOLD = 16384" in shipped
