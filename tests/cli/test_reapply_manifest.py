"""apply run on its own output says "already applied", writes the same tree and an equivalent manifest.

Equivalent: every field the same but ``input``, which names what the run
read (the name, and the sha256 of a file; null for a folder). ``origin``
keeps naming the vendor drop the patches were first applied to, and the
steps, fingerprints, statuses, mirrors and changed files come from the
input's manifest for as long as the tree still holds what it says. The
manifest is a record, never evidence: it allows no rule, and one that does
not read or no longer fits the tree is replaced, with a note.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_cli import MANIFEST, SERIES, context_files, tar_files
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

FORMATS = ["ctx.tar.gz", "ctx.tar", "ctx.zip", "ctx"]


def _tree(path: Path) -> dict[str, bytes]:
    """The context's files (the manifest aside), by context-relative path, whatever the format."""
    from patcher.archive import open_source

    with open_source(path) as tree:
        return {f.path: tree.read(f.path) for f in tree.files() if f.path != MANIFEST}


def _manifest(path: Path) -> dict[str, Any]:
    from patcher.archive import open_source

    with open_source(path) as tree:
        return json.loads(tree.read(MANIFEST))


def _but_input(manifest: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in manifest.items() if key != "input"}


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """apply's outputs of the demo zip, one per format."""
    from tests.fixtures_cli import run_patcher

    folder = tmp_path_factory.mktemp("outputs")
    outputs = {}
    for name in FORMATS:
        result = run_patcher("apply", VENDOR_ZIP, "-o", folder / name)
        assert result.exit_code == 0, result.stderr
        outputs[name] = folder / name
    return outputs


@pytest.mark.parametrize("given", FORMATS)
@pytest.mark.parametrize("written", ["again.tar.gz", "again"])
def test_reapply_reports_already_applied_and_writes_the_same_tree(cli, first, given: str, written: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", first[given], "-o", written)
    assert result.exit_code == 0, result.stderr
    assert "0 applied, 3 already applied, 0 failed; 0 mirror(s) re-synced" in result.stderr
    assert [line.split()[:3] for line in result.stderr.splitlines() if line.startswith("  ")] == \
        [["already", "applied", patch] for patch in SERIES]
    assert _tree(cli.cwd / written) == _tree(first[given]) == _tree(first["ctx.tar.gz"])


@pytest.mark.parametrize("given", FORMATS)
def test_reapply_writes_a_manifest_equal_but_for_what_it_read(cli, first, given: str) -> None:  # type: ignore[no-untyped-def]
    original = _manifest(first[given])
    assert original["origin"] == original["input"] == {
        "name": VENDOR_ZIP.name, "sha256": hashlib.sha256(VENDOR_ZIP.read_bytes()).hexdigest()}
    assert cli("apply", first[given], "-o", "again.tar").exit_code == 0
    again = _manifest(cli.cwd / "again.tar")
    assert again["input"] == {"name": given, "sha256": _sha(first[given])}
    assert _but_input(again) == _but_input(original)
    assert [p["status"] for p in again["patches"]] == ["applied"] * 3
    assert all(p["steps"] for p in again["patches"])
    assert again["changed_files"] == {path: hashlib.sha256(_tree(first[given])[path]).hexdigest()
                                      for path in ("paged_attn.py", SHIPPED)}


def test_a_third_run_still_names_the_vendor_drop_as_origin(cli, first) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", first["ctx.zip"], "-o", "second").exit_code == 0
    assert cli("apply", "second", "-o", "third.tgz").exit_code == 0
    third = _manifest(cli.cwd / "third.tgz")
    assert third["input"] == {"name": "second", "sha256": None}
    assert _but_input(third) == _but_input(_manifest(first["ctx.zip"]))


def test_a_hand_edit_after_apply_stops_the_record_being_carried(cli, first, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    edited = shutil.copytree(first["ctx"], tmp_path / "edited")
    shipped = edited / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"# tuned by hand on the lab card\n")
    result = cli("apply", edited, "-o", "again")
    assert result.exit_code == 0, result.stderr
    assert f"note: {edited}: {SHIPPED} changed since {MANIFEST} was written; " \
           "the new manifest records this run alone" in result.stderr.splitlines()
    manifest = json.loads((cli.cwd / "again" / MANIFEST).read_text())
    assert [(p["status"], p["steps"]) for p in manifest["patches"]] == [("already applied", [])] * 3
    assert manifest["origin"] == manifest["input"] == {"name": "edited", "sha256": None}
    # This run's own change: the stale copy follows the edited shipped copy.
    assert manifest["changed_files"] == {"paged_attn.py": hashlib.sha256(shipped.read_bytes()).hexdigest()}
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": True}]


@pytest.mark.parametrize("content, why", [
    (b"{not json", "it is not JSON (JSONDecodeError)"),
    (b"[" * 200_000 + b"]" * 200_000, "it nests deeper than 100 levels of arrays and tables at line 1"),
    (b"\xff\xfe{}", "it is not JSON (UnicodeDecodeError)"),
    (b'{"input": {"name": "x", "sha256": null}, "patches": {}}', "patches is not a list"),
])
def test_a_manifest_that_does_not_read_is_replaced_with_a_note(cli, first, tmp_path: Path, content: bytes,  # type: ignore[no-untyped-def]
                                                               why: str) -> None:
    import shutil

    forged = shutil.copytree(first["ctx"], tmp_path / "forged")
    (forged / MANIFEST).write_bytes(content)
    result = cli("apply", forged, "-o", "again")
    assert result.exit_code == 0, result.stderr
    assert f"note: {forged}: {MANIFEST} is not one apply wrote ({why}); the new one records this run alone" \
        in result.stderr.splitlines()
    manifest = json.loads((cli.cwd / "again" / MANIFEST).read_text())
    assert manifest["input"]["name"] == "forged" and manifest["patches"][0]["status"] == "already applied"
    assert (forged / MANIFEST).read_bytes() == content  # the input is never modified


def test_a_manifest_that_allows_a_rule_allows_nothing_to_apply(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # A drop that re-enables the Triton prefill and brings a manifest claiming an earlier --allow.
    shipped = vendor_copy / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"\nfrom vllm.attention.ops.prefix_prefill import context_attention_fwd\n")
    (vendor_copy / MANIFEST).write_text(json.dumps({
        "input": {"name": "x.zip", "sha256": None}, "patch_set": {"series": []}, "patches": [], "mirrors": [],
        "changed_files": {}, "allowed_rules": [{"rule": "no-triton-kernels", "reason": "trust me"}]}))
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar.gz")
    assert result.exit_code == 2
    assert any(line.startswith("error: ") and "no-triton-kernels" in line for line in result.stderr.splitlines())
    assert not (cli.cwd / "ctx.tar.gz").exists()


def test_reapply_keeps_the_dockerignore_it_wrote_and_lists_it_as_changed(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    dockerfile = vendor_copy / "Dockerfile"
    dockerfile.write_bytes(dockerfile.read_bytes().replace(b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                                                           b"COPY . /workspace/"))
    (vendor_copy / ".dockerignore").write_bytes(b"/__init__.py\n/attention.py\n/prefix_prefill.py\n/paged_attn.py\n")
    assert cli("apply", make_zip(vendor_copy), "-o", "ctx.tar").exit_code == 0
    result = cli("apply", "ctx.tar", "-o", "again.tar")
    assert result.exit_code == 0, result.stderr
    assert "added patcher-manifest.json to .dockerignore" not in result.stderr
    first, again = tar_files(cli.cwd / "ctx.tar"), tar_files(cli.cwd / "again.tar")
    assert again[".dockerignore"] == first[".dockerignore"]
    assert first[".dockerignore"][1].count(MANIFEST.encode()) == 1
    assert _but_input(json.loads(again[MANIFEST][1])) == _but_input(json.loads(first[MANIFEST][1]))


@pytest.mark.parametrize("given", ["ctx.tar.gz", "ctx"])
def test_an_output_that_is_the_input_or_inside_it_is_refused(cli, first, tmp_path: Path, given: str) -> None:  # type: ignore[no-untyped-def]
    import shutil

    source = tmp_path / given
    if first[given].is_dir():
        shutil.copytree(first[given], source)
        dest = source / "out.tar.gz"
    else:
        shutil.copy(first[given], source)
        dest = source
    before = context_files(source) if source.is_dir() else source.read_bytes()
    result = cli("apply", source, "-o", dest, "--force")
    assert result.exit_code == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    where = "the input itself" if dest == source else "inside the input folder"
    assert line.startswith(f"error: {dest}: is {where}, which apply never modifies (write elsewhere, e.g. -o ")
    suggested = Path(line.rsplit("-o ", 1)[1].rstrip(")"))
    assert cli("apply", source, "-o", suggested).exit_code == 0  # the hint works on that very input
    assert (context_files(source) if source.is_dir() else source.read_bytes()) == before
