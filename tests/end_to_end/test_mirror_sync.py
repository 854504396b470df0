"""A stale mirror that differs from the shipped copy, if only in line endings, is made identical to it."""

from __future__ import annotations

import json

from tests.fixtures_cli import GOLDEN, MANIFEST, apply_to_folder
from tests.fixtures_vendor import SHIPPED


# The vendor tree here already carries the patch set, so only the mirror can change; the manifest's
# mirror section says whether the mirror differed before the run.
def test_a_mirror_differing_only_in_crlf_is_rewritten(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    golden = GOLDEN.read_bytes()
    assert b"\r\n" not in golden
    (vendor_copy / SHIPPED).write_bytes(golden)
    (vendor_copy / "paged_attn.py").write_bytes(golden.replace(b"\n", b"\r\n"))
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx")
    assert result.exit_code == 0, result.stderr
    folder = cli.cwd / "ctx"
    assert (folder / "paged_attn.py").read_bytes() == golden == (folder / SHIPPED).read_bytes()
    assert f"mirror paged_attn.py: differed only in line endings from {SHIPPED}; now identical to it" in result.stderr
    assert "0 applied, 3 already applied, 0 failed; 1 mirror(s) re-synced" in result.stderr
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": True}]


def test_a_mirror_equal_to_the_patched_copy_but_for_crlf_is_rewritten(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    golden = GOLDEN.read_bytes()
    (vendor_copy / "paged_attn.py").write_bytes(golden.replace(b"\n", b"\r\n"))
    folder, _ = apply_to_folder(cli, make_zip(vendor_copy))
    assert (folder / "paged_attn.py").read_bytes() == golden == (folder / SHIPPED).read_bytes()
