"""The manifest records what a run did.

The input's sha256, the series, each patch's parameters and status, the sha256 of every changed
file, each mirror and whether it had drifted, and per step fingerprints of what matched: of the
``ast`` dump, so comments, line breaks and CRLF do not change them, and a changed capture does.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.fixtures_cli import GOLDEN, MANIFEST, apply_to_folder, tar_files
from tests.fixtures_vendor import SHIPPED


def test_manifest_records_input_patches_and_changes(demo_applied, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    _, output = demo_applied
    files = tar_files(output)
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


def test_the_manifest_says_when_a_mirror_was_already_identical(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).write_bytes(GOLDEN.read_bytes())
    (vendor_copy / "paged_attn.py").write_bytes(GOLDEN.read_bytes())
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx")
    assert result.exit_code == 0, result.stderr
    assert f"mirror paged_attn.py: identical to {SHIPPED}" in result.stderr
    assert "; 0 mirror(s) re-synced" in result.stderr
    manifest = json.loads((cli.cwd / "ctx" / MANIFEST).read_text())
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": False}]


def test_the_demo_zip_manifest_records_the_drifted_mirror(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    folder, manifest = apply_to_folder(cli, vendor_zip)
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": True}]
    assert (folder / "paged_attn.py").read_bytes() == (folder / SHIPPED).read_bytes()


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
