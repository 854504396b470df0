"""``patcher apply`` end to end through the CLI on the demo vendor zip."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

GOLDEN = Path(__file__).parent / "golden" / "paged_attn.patched.py"
MANIFEST = "patcher-manifest.json"


def _tar_files(path: Path) -> dict[str, tuple[int, bytes]]:
    with tarfile.open(path) as archive:
        return {
            m.name: (m.mode, archive.extractfile(m).read())  # type: ignore[union-attr]
            for m in archive.getmembers()
            if m.isfile()
        }


def _vendor_files() -> dict[str, bytes]:
    return {p.relative_to(VENDOR_TREE).as_posix(): p.read_bytes() for p in VENDOR_TREE.rglob("*") if p.is_file()}


@pytest.fixture
def applied(cli, vendor_zip):  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz")
    assert result.exit_code == 0, result.stderr
    return result, cli.cwd / "ctx.tar.gz"


def test_shipped_copy_matches_golden_output(applied) -> None:  # type: ignore[no-untyped-def]
    _, output = applied
    assert _tar_files(output)[SHIPPED][1] == GOLDEN.read_bytes()


def test_report_lists_each_patch_mirror_and_output(applied) -> None:  # type: ignore[no-untyped-def]
    result, output = applied
    for patch in ("three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"):
        assert f"applied          {patch}" in result.stderr
    assert "mirror paged_attn.py: differed from qwen3_6_scripts/paged_attn.py; now identical" in result.stderr
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in result.stderr
    assert result.stdout.strip() == "ctx.tar.gz"


def test_untouched_files_are_byte_identical_with_modes(applied) -> None:  # type: ignore[no-untyped-def]
    _, output = applied
    files = _tar_files(output)
    vendor = _vendor_files()
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


def test_mirror_is_made_identical_to_the_shipped_copy(applied) -> None:  # type: ignore[no-untyped-def]
    _, output = applied
    files = _tar_files(output)
    assert files["paged_attn.py"][1] == files[SHIPPED][1]
    assert _vendor_files()["paged_attn.py"] != _vendor_files()[SHIPPED]


def test_dockerfile_at_archive_root_and_gzip_header_is_clean(applied) -> None:  # type: ignore[no-untyped-def]
    _, output = applied
    with tarfile.open(output) as archive:
        names = archive.getnames()
        assert "Dockerfile" in names
        assert all(m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == "" for m in archive.getmembers())
        assert names == sorted(names)
    header = output.read_bytes()[:10]
    assert header[4:8] == b"\0\0\0\0"  # no timestamp
    assert header[3] & 0x08 == 0  # no file name


def test_manifest_records_input_patches_and_changes(applied, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    _, output = applied
    files = _tar_files(output)
    manifest = json.loads(files[MANIFEST][1])
    assert manifest["input"]["sha256"] == hashlib.sha256(vendor_zip.read_bytes()).hexdigest()
    assert manifest["patch_set"]["series"] == ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]
    statuses = {p["id"]: (p["status"], p["params"]) for p in manifest["patches"]}
    assert statuses["three-tier-decode"] == ("applied", {"small_max": 8192, "large_threshold": 32768})
    assert manifest["changed_files"] == {
        path: hashlib.sha256(files[path][1]).hexdigest() for path in ("paged_attn.py", SHIPPED)
    }
    # The manifest is not copied into the image: the Dockerfile copies qwen3_6_scripts only.
    assert "COPY ./qwen3_6_scripts" in files["Dockerfile"][1].decode()


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


def test_directory_output(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
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
    shipped = _tar_files(cli.cwd / "ctx.tar")[SHIPPED][1].decode()
    assert "use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in shipped
    assert "_PYTORCH_DECODE_THRESHOLD = 16384" in shipped


def test_a_missing_anchor_fails_with_exit_2_and_writes_nothing(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    shipped = vendor_copy / SHIPPED
    shipped.write_text(shipped.read_text().replace("        use_v1 = True  # BI-V100: the V2 kernel is not available\n", ""))
    variant = make_zip(vendor_copy)
    before = variant.read_bytes()
    result = cli("apply", variant, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    assert ("error: qwen3_6_scripts/paged_attn.py: patch three-tier-decode: step 2 (replace): "
            "expected 'use_v1 = $HEURISTIC / use_v1 = True") in result.stderr
    assert "in PagedAttention.forward_decode" in result.stderr
    assert "closest: lines " in result.stderr and "statement 2 differs: pattern 'use_v1 = True'" in result.stderr
    assert f"'patcher diff --keep-going {variant}'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (cli.cwd / "ctx.tar.gz").exists()
    assert list(cli.cwd.iterdir()) == []
    assert variant.read_bytes() == before


def test_existing_output_is_kept_without_force(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    (cli.cwd / "ctx.tar.gz").write_bytes(b"old")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    assert "--force" in result.stderr
    assert (cli.cwd / "ctx.tar.gz").read_bytes() == b"old"
    assert cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--force").exit_code == 0
    assert (cli.cwd / "ctx.tar.gz").read_bytes() != b"old"


def test_output_is_identical_across_time_zone_umask_and_cwd(tmp_path: Path, vendor_zip: Path) -> None:
    digests = []
    for index, (tz, umask) in enumerate((("UTC", "022"), ("Asia/Shanghai", "077"))):
        work = tmp_path / f"run{index}" / "nested"
        work.mkdir(parents=True)
        script = f"import os; os.umask(0o{umask}); from patcher.cli import main; main()"
        env = {**os.environ, "TZ": tz, "LC_ALL": "C" if index else "C.UTF-8", "PYTHONPATH": str(ROOT)}
        env.pop("SOURCE_DATE_EPOCH", None)
        subprocess.run([sys.executable, "-c", script, "apply", str(vendor_zip), "-o", "ctx.tar.gz",
                        "--patches", str(ROOT / "patches")], cwd=work, env=env, check=True, capture_output=True)
        digests.append(hashlib.sha256((work / "ctx.tar.gz").read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_source_date_epoch_sets_the_mtime(cli, vendor_zip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert cli("apply", vendor_zip, "-o", "ctx.tar").exit_code == 0
    with tarfile.open(cli.cwd / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1700000000}


def test_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", "--help")
    assert "Exit codes: 0 done; 1 a check found a difference; 2 bad input" in " ".join(result.stdout.split())


def test_missing_input_is_one_clear_line(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", "nope.zip")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_concurrent_runs_writing_different_outputs_do_not_interfere(tmp_path: Path, vendor_zip: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "patcher", "apply", str(vendor_zip), "--patches", str(ROOT / "patches"), "-o"]
    runs = [subprocess.Popen([*command, name], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
            for name in ("a.tar.gz", "b.tar.gz", "c.zip")]
    assert [run.wait(timeout=120) for run in runs] == [0, 0, 0]
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "b.tar.gz", "c.zip"]


def test_manifest_is_kept_out_of_an_image_that_copies_the_context_root(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    dockerfile = vendor_copy / "Dockerfile"
    dockerfile.write_bytes(dockerfile.read_bytes().replace(b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                                                           b"COPY . /workspace/"))
    # The stale root copies must stay out too, or the safety rules refuse them.
    ignore = b"# stale copies\r\n/__init__.py\r\n/attention.py\r\n/prefix_prefill.py\r\n/paged_attn.py"
    (vendor_copy / ".dockerignore").write_bytes(ignore)
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar")
    assert result.exit_code == 0, result.stderr
    assert "added patcher-manifest.json to .dockerignore" in result.stderr
    files = _tar_files(cli.cwd / "ctx.tar")
    assert files[".dockerignore"][1] == ignore + b"\r\npatcher-manifest.json\r\n"
    manifest = json.loads(files[MANIFEST][1])
    assert ".dockerignore" in manifest["changed_files"]
    # The output, read as a context, does not ship its manifest.
    from patcher.archive import open_source
    from patcher.shipping import plan_shipping

    with open_source(_unpack(cli.cwd / "ctx.tar")) as tree:
        plan = plan_shipping(tree)
        assert not plan.ships(MANIFEST) and plan.ships("qwen3_6_scripts/paged_attn.py")


def _unpack(archive: Path) -> Path:
    target = archive.with_suffix("")
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target


def test_a_new_dockerignore_shows_in_diff_and_patch_creates_it(cli, vendor_copy, make_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dockerfile = vendor_copy / "Dockerfile"
    dockerfile.write_bytes(dockerfile.read_bytes().replace(b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                                                           b"COPY . /workspace/"))
    variant = make_zip(vendor_copy)
    result = cli("diff", variant)
    assert result.exit_code == 0, result.stderr
    assert "--- /dev/null\n+++ b/.dockerignore\n" in result.stdout
    subprocess.run(["patch", "-p1", "-s"], input=result.stdout_bytes, cwd=vendor_copy, check=True)
    assert (vendor_copy / ".dockerignore").read_bytes() == b"patcher-manifest.json\n"


def test_a_failing_drop_that_reenables_triton_gets_both_errors(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from make_upgrade_pairs import make_tree

    tree = make_tree(tmp_path / "drop", "triton-reenabled", "no-longer-applies")
    shipped = (tree / SHIPPED).read_bytes()
    result = cli("apply", tree, "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    pattern = [i for i, line in enumerate(lines) if line.startswith(f"error: {SHIPPED}: patch three-tier-decode: ")]
    triton = [i for i, line in enumerate(lines) if line.startswith(f"error: {SHIPPED}:") and ": no-triton-kernels: " in line]
    assert len(pattern) == 1 and triton
    assert "closest: lines " in lines[pattern[0]]
    assert any("context_attention_fwd" in lines[i] for i in triton)
    written = [i for i, line in enumerate(lines) if line.startswith("nothing written")]
    assert written and written[0] > max(pattern + triton)
    assert "1 patch failure(s)" in lines[written[0]] and "safety rule error(s)" in lines[written[0]]
    assert list(cli.cwd.iterdir()) == []
    assert (tree / SHIPPED).read_bytes() == shipped


def test_manifest_fingerprints_ignore_layout_and_see_a_changed_capture(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from make_upgrade_pairs import make_tree

    def steps(tree: Path) -> dict[str, list[dict[str, object]]]:
        out = tmp_path / f"out-{tree.name}"
        assert cli("apply", tree, "-o", out).exit_code == 0
        manifest = json.loads((out / MANIFEST).read_bytes())
        return {p["id"]: p["steps"] for p in manifest["patches"]}

    base = steps(make_tree(tmp_path / "base"))
    decode = base["three-tier-decode"]
    assert [s["step"] for s in decode] == [1, 2]
    [match] = decode[1]["matches"]
    assert sorted(match["bindings"]) == ["HEURISTIC", "V1_ARGS", "V2_ARGS", "V2_SETUP"]
    assert all(len(h) == 64 for h in [match["code"], *match["bindings"].values()])
    assert steps(make_tree(tmp_path / "reformatted", "reformatted")) == base
    changed = steps(make_tree(tmp_path / "v2", "v2-gains-argument"))
    [after] = changed["three-tier-decode"][1]["matches"]
    assert after["bindings"]["V2_ARGS"] != match["bindings"]["V2_ARGS"]
    assert after["code"] != match["code"]
    assert {k: v for k, v in after["bindings"].items() if k != "V2_ARGS"} == \
        {k: v for k, v in match["bindings"].items() if k != "V2_ARGS"}
    assert changed["prefix-pregather"] == base["prefix-pregather"]
