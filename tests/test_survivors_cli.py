"""CLI behaviours no other test pinned down: mirrors, the manifest, internal errors, the cache, dates.

Each test here fails with a bug that once survived the whole suite (issue 13).
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_vendor import SHIPPED

GOLDEN = Path(__file__).parent / "golden" / "paged_attn.patched.py"
MANIFEST = "patcher-manifest.json"


def _apply_to_folder(cli, source: Path, name: str = "ctx") -> tuple[Path, dict]:  # type: ignore[no-untyped-def]
    result = cli("apply", source, "-o", name)
    assert result.exit_code == 0, result.stderr
    folder = cli.cwd / name
    return folder, json.loads((folder / MANIFEST).read_text())


# 6 and 12. A mirror that differs from the shipped copy only in CRLF is rewritten byte for
# byte, and the manifest's mirror section says whether each mirror differed before the run.
# The vendor tree here already carries the patch set, so only the mirror can change.
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
    folder, _ = _apply_to_folder(cli, make_zip(vendor_copy))
    assert (folder / "paged_attn.py").read_bytes() == golden == (folder / SHIPPED).read_bytes()


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
    folder, manifest = _apply_to_folder(cli, vendor_zip)
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": True}]
    assert (folder / "paged_attn.py").read_bytes() == (folder / SHIPPED).read_bytes()


# 8. A bug inside patcher is exit 3 and one line naming it, never a traceback (unless --verbose).
def test_an_internal_error_is_exit_3_and_one_line(cli, vendor_zip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import patcher.pipeline

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("planted bug")

    monkeypatch.setattr(patcher.pipeline, "cached_patch_source", broken)
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz")
    assert result.exit_code == 3
    assert result.stderr == ("error: internal error: RuntimeError: planted bug "
                             "(a bug in patcher; rerun with --verbose for the traceback and report it)\n")
    assert result.stdout == ""
    assert list(cli.cwd.iterdir()) == []
    verbose = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--verbose")
    assert verbose.exit_code == 3
    assert "Traceback" in verbose.stderr and "RuntimeError: planted bug" in verbose.stderr


# 14. A second run on the same input is served from the cache, and writes the same bytes.
def test_a_warm_run_is_a_cache_hit(cli, vendor_zip, monkeypatch, hermetic_cache) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset import cache

    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    computed: list[str] = []
    real = cache.patch_source

    def counting(path, source, patches):  # type: ignore[no-untyped-def]
        computed.append(path)
        return real(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    assert cli("apply", vendor_zip, "-o", "cold.tar.gz").exit_code == 0
    assert computed == [SHIPPED]
    assert len(list((hermetic_cache / "patched").iterdir())) == 1
    assert cli("apply", vendor_zip, "-o", "warm.tar.gz").exit_code == 0
    assert computed == [SHIPPED]  # nothing computed the second time
    assert (cli.cwd / "warm.tar.gz").read_bytes() == (cli.cwd / "cold.tar.gz").read_bytes()


@pytest.fixture
def far_time_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in UTC+5:30 (a POSIX TZ string: no zone database needed)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# Also weak before: the zip's dates were only asserted to be ">= 1980".
@pytest.mark.parametrize(("epoch", "date_time"), [
    (None, (1980, 1, 1, 0, 0, 0)),
    ("1700000000", (2023, 11, 14, 22, 13, 20)),  # UTC, whatever the local zone
])
def test_zip_output_dates_are_the_fixed_time(cli, vendor_zip, monkeypatch, far_time_zone, epoch, date_time) -> None:  # type: ignore[no-untyped-def]
    if epoch is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    assert cli("apply", vendor_zip, "-o", "out.zip").exit_code == 0
    with zipfile.ZipFile(cli.cwd / "out.zip") as archive:
        assert {info.date_time for info in archive.infolist()} == {date_time}
