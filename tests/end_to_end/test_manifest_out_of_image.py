"""Where the Dockerfile copies the context root, apply keeps the manifest out of the image.

It adds the manifest to .dockerignore, creating the file if needed, and diff shows that change.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

from tests.fixtures_cli import MANIFEST, copy_the_context_root, tar_files


def test_manifest_is_kept_out_of_an_image_that_copies_the_context_root(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    copy_the_context_root(vendor_copy)
    # The stale root copies must stay out too, or the safety rules refuse them.
    ignore = b"# stale copies\r\n/__init__.py\r\n/attention.py\r\n/prefix_prefill.py\r\n/paged_attn.py"
    (vendor_copy / ".dockerignore").write_bytes(ignore)
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar")
    assert result.exit_code == 0, result.stderr
    assert "added patcher-manifest.json to .dockerignore" in result.stderr
    files = tar_files(cli.cwd / "ctx.tar")
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


def test_apply_creates_the_dockerignore_a_context_root_copy_needs(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    copy_the_context_root(vendor_copy)
    for stale in ("__init__.py", "attention.py", "prefix_prefill.py", "paged_attn.py"):
        (vendor_copy / stale).unlink()  # else the safety rules refuse the root copies the image now ships
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar")
    assert result.exit_code == 0, result.stderr
    files = tar_files(cli.cwd / "ctx.tar")
    assert files[".dockerignore"] == (0o644, b"patcher-manifest.json\n")
    assert ".dockerignore" in json.loads(files[MANIFEST][1])["changed_files"]


def test_a_new_dockerignore_shows_in_diff_and_patch_creates_it(cli, vendor_copy, make_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copy_the_context_root(vendor_copy)
    variant = make_zip(vendor_copy)
    result = cli("diff", variant)
    assert result.exit_code == 0, result.stderr
    assert "--- /dev/null\n+++ b/.dockerignore\n" in result.stdout
    subprocess.run(["patch", "-p1", "-s"], input=result.stdout_bytes, cwd=vendor_copy, check=True)
    assert (vendor_copy / ".dockerignore").read_bytes() == b"patcher-manifest.json\n"
