"""``patcher diff`` prints a diff that ``patch -p1`` turns into exactly apply's tree.

``git apply`` takes it too; paths are relative to the context root, and CRLF lines and missing
final newlines come through.
"""

from __future__ import annotations

import shutil
import subprocess

from tests.fixtures_cli import MANIFEST, applied_folder, context_files, needs_patch, patch_p1, unzip
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP


@needs_patch
def test_patch_p1_on_the_unpacked_vendor_context_reproduces_apply(plain, applied, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert plain.exit_code == 0
    context = unzip(VENDOR_ZIP, tmp_path / "unpacked")
    patch_p1(context, plain.stdout_bytes)
    assert context_files(context) == applied
    if shutil.which("git"):  # git apply takes the same diff
        other = unzip(VENDOR_ZIP, tmp_path / "git-apply")
        subprocess.run(["git", "apply", "--whitespace=nowarn"], cwd=other, input=plain.stdout_bytes, check=True)
        assert context_files(other) == applied


@needs_patch
def test_round_trip_keeps_crlf_and_a_missing_final_newline(cli, vendor_copy, make_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shipped = vendor_copy / SHIPPED
    text = shipped.read_bytes().replace(b"\r\n", b"\n")
    shipped.write_bytes(text.rstrip(b"\n").replace(b"\n", b"\r\n"))  # CRLF, no newline at the end
    (vendor_copy / "paged_attn.py").write_bytes(b"# stale, without a final newline")
    source = make_zip(vendor_copy)
    result = cli("diff", source)
    assert result.exit_code == 0, result.stderr
    assert b"\\ No newline at end of file\n" in result.stdout_bytes
    assert b"\r\n" in result.stdout_bytes
    context = unzip(source, tmp_path / "unpacked")
    patch_p1(context, result.stdout_bytes)
    expected = context_files(applied_folder(cli, source))
    del expected[MANIFEST]
    assert context_files(context) == expected
    assert not context_files(context)[SHIPPED][0].endswith(b"\n")


def test_paths_are_relative_to_the_context_root(plain) -> None:  # type: ignore[no-untyped-def]
    headers = [line for line in plain.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [f"--- a/{SHIPPED}", f"+++ b/{SHIPPED}", "--- a/paged_attn.py", "+++ b/paged_attn.py"]
