"""What ``patcher check PATH`` reads: one file, a zip, a folder with apply's manifest, a build context tar.

Written against the survivors of a mutation run of ``patcher/checks/inputs.py``.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.checks import load_policy
from patcher.checks import inputs, runner
from patcher.checks.base import PythonSource
from patcher.checks.inputs import check_path, manifest_overrides
from patcher.errors import BadArchive, PatcherError
from patcher.shipping import plan_shipping

from tests.fixtures_vendor import FIXTURES, PATCHES, SHIPPED, VENDOR_TREE, VENDOR_ZIP

sys.path.insert(0, str(FIXTURES))
from make_bad_archives import TOP, Member, corrupt_data, with_base  # noqa: E402

POLICY = load_policy(PATCHES / "policy.toml")
KERNEL_IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
REASON = "lab card, Triton build under test (ticket 42)"


def _rows(result) -> list[tuple[str, str, str, int]]:  # type: ignore[no-untyped-def]
    return [(v.rule, v.severity.value, v.path, v.line) for v in result.violations]


def _tree_with_manifest(tmp_path: Path, manifest: object) -> Path:
    tree = tmp_path / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, tree)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    (tree / "patcher-manifest.json").write_text(text)
    return tree


def test_one_python_file_gets_the_file_rules_and_the_overrides_given(tmp_path: Path) -> None:
    script = tmp_path / "prefill.py"
    script.write_text("# a hurried local copy\r\n" + KERNEL_IMPORT)
    plain = check_path(script, POLICY)
    assert _rows(plain) == [("no-triton-kernels", "error", str(script), 2)]
    assert len(plain.errors) == 1 and plain.allowed == {}
    allowed = check_path(script, POLICY, allowed=[("no-triton-kernels", REASON)])
    assert allowed.allowed == {"no-triton-kernels": REASON}
    assert allowed.errors == () and [v.line for v in allowed.overridden] == [2]


def test_a_target_the_tree_does_not_ship_leaves_the_others_checked() -> None:
    # A patch set may change files of other vendor layouts too: only the shipped ones have an install.
    alone = check_path(VENDOR_ZIP, POLICY, targets=[SHIPPED])
    after_unshipped = check_path(VENDOR_ZIP, POLICY, targets=["vllm/not_in_this_drop.py", SHIPPED])
    loud = [(v.path, v.line) for v in alone.violations if v.rule == "install-fails-loudly"]
    assert loud == [("qwen3_6_scripts/patch_ops.sh", 8)]
    assert after_unshipped.violations == alone.violations


def test_overrides_recorded_by_apply_count_with_their_reason(tmp_path: Path) -> None:
    tree = _tree_with_manifest(tmp_path, {"patches": [], "allowed_rules": [
        {"rule": "no-triton-kernels", "reason": REASON}]})
    result = check_path(tree, POLICY, allowed=[("python-3.10", "checked by hand")])
    assert result.allowed == {"no-triton-kernels": f"{REASON} (recorded in patcher-manifest.json)",
                              "python-3.10": "checked by hand"}


def test_a_manifest_without_overrides_allows_nothing(tmp_path: Path) -> None:
    tree = _tree_with_manifest(tmp_path, {"patches": ["three-tier-decode"]})
    with open_source(tree) as source:
        assert manifest_overrides(source) == ()
    assert check_path(tree, POLICY).allowed == {}


@pytest.mark.parametrize("manifest", [
    '{"allowed_rules": [{"rule": "no-triton-kernels"}]}',  # the reason was deleted
    '{"allowed_rules": "no-triton-kernels"}',
    '["no-triton-kernels"]',
    '{"allowed_rules": [',
])
def test_a_manifest_edited_by_hand_is_an_error_that_says_where(tmp_path: Path, manifest: str) -> None:
    tree = _tree_with_manifest(tmp_path, manifest)
    with pytest.raises(PatcherError) as raised:
        check_path(tree, POLICY)
    error = raised.value
    assert (error.message, error.where, error.hint) == (
        "allowed_rules is unreadable", "patcher-manifest.json",
        "was the manifest edited by hand? re-run 'patcher apply'")


def test_a_shipped_file_that_cannot_be_read_is_reported_as_a_bad_archive(tmp_path: Path) -> None:
    name = TOP + "scripts/broken.py"
    source = tmp_path / "vendor-demo.zip"
    source.write_bytes(corrupt_data(with_base(Member(name, b"LEVEL = 2\n" * 20, method=zipfile.ZIP_STORED)),
                                    name, at=5))
    with pytest.raises(BadArchive, match="fails its CRC check"):
        check_path(source, POLICY)


def test_the_second_half_of_the_shipped_files_is_judged_in_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = runner._check_file

    def recording(source: PythonSource, rules):  # type: ignore[no-untyped-def]
        parsed.append(source.path)  # the child's calls land in the child's copy of this list
        return real(source, rules)

    monkeypatch.setattr(runner, "_check_file", recording)
    with open_source(VENDOR_ZIP) as tree:
        files = {path: tree.read(path) for path in runner.shipped_python(plan_shipping(tree))}
    later = runner.last_half(files)
    assert later and len(later) < len(files)
    result = check_path(VENDOR_ZIP, POLICY, targets=[SHIPPED])
    assert result.checked == tuple(sorted(files))
    assert parsed == sorted(set(files) - set(later))
    assert ("v2-needs-fallback", "note", SHIPPED, 253) in _rows(result)  # paged_attn.py is the child's


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
    assert raised.value.where == str(tar)
    assert raised.value.message.startswith("not a readable tar: ") and "outside.py" in raised.value.message
    assert not (tmp_path / "outside.py").exists()


def test_a_tar_that_is_not_one_is_a_bad_archive(tmp_path: Path) -> None:
    tar = tmp_path / "ctx.tar.gz"
    tar.write_bytes(b"\x1f\x8b\x08\x00 truncated by a hurried scp")
    with pytest.raises(BadArchive) as raised:
        check_path(tar, POLICY)
    assert raised.value.where == str(tar) and raised.value.message.startswith("not a readable tar: ")


def test_a_python_without_the_tar_data_filter_is_told_to_unpack_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tar = _context_tar(tmp_path / "ctx.tar", "w")
    monkeypatch.delattr(inputs.tarfile, "data_filter")  # as on Python 3.10.11 and older
    with pytest.raises(PatcherError) as raised:
        check_path(tar, POLICY)
    version = sys.version.split()[0]
    assert raised.value.message == f"checking a tar needs Python 3.10.12 or later (this is {version})"
    assert (raised.value.where, raised.value.hint) == (str(tar), "unpack it and check the folder")
