"""upgrade on a context apply wrote answers as on the vendor drop it was made from, in every output format.

A context is patched code: the patterns find every patch already applied
there and fingerprint nothing. While it still holds what apply wrote, its
manifest stands in: each patch counts with the status and fingerprints
recorded on the drop it was made from (their texts are not recorded: shown
as recorded), and its scopes are compared with the other drop as patched.
So ``upgrade OUT VENDOR.zip`` and ``upgrade VENDOR.zip OUT`` find nothing to
review, and ``upgrade OUT NEW`` finds what ``upgrade VENDOR.zip NEW`` finds:
the V2 call gained an argument. A context edited after apply, or whose
manifest does not read, is just a tree, and a note says so. The manifest is
a record, never evidence: a forged fingerprint hides no change of the code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from patcher.review.upgrade import AS_RECORDED
from tests.fixtures_cli import MANIFEST, SERIES, patch_of, run_patcher, scopes_of
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

from make_upgrade_pairs import make_tree  # noqa: E402  (fixtures/ is on sys.path once fixtures_vendor is imported)

FORMATS = {"tar.gz": "out.tar.gz", "tar": "out.tar", "zip": "out.zip", "folder": "out"}
DECODE = "PagedAttention.forward_decode"


def _upgrade(old: Path, new: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = run_patcher("upgrade", old, new, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def drops(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """apply's output of the demo zip in every format, the V2-gains-an-argument drop, and apply's output of it."""
    folder = tmp_path_factory.mktemp("contexts")
    made = {"new": make_tree(folder / "v2-new", "v2-gains-argument")}
    for fmt, name in FORMATS.items():
        result = run_patcher("apply", VENDOR_ZIP, "-o", folder / name)
        assert result.exit_code == 0, result.stderr
        made[fmt] = folder / name
    result = run_patcher("apply", made["new"], "-o", folder / "new-out")
    assert result.exit_code == 0, result.stderr
    made["new-out"] = folder / "new-out"
    return made


@pytest.fixture(scope="module")
def reference(drops: dict[str, Path]) -> tuple[int, dict[str, Any]]:
    """``upgrade VENDOR.zip NEW``: the vendor drop itself as OLD."""
    code, report = _upgrade(VENDOR_ZIP, drops["new"])
    assert code == 1
    return code, report


def _bindings(report: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [(c["step"], c["match"], c["binding"]) for c in patch_of(report, "three-tier-decode")["captures"]]


def _reasons(report: dict[str, Any], severity: str = "review") -> list[str]:
    return [f"{r['subject']}: {r['text']}" for r in report["verdict"]["reasons"] if r["severity"] == severity]


def _nothing_changed(report: dict[str, Any]) -> None:
    assert report["verdict"]["reasons"] == [] and report["needs_review"] is False
    for patch in report["patches"]:
        assert (patch["old"], patch["new"], patch["captures_changed"]) == ("applies", "applies", False)
        assert all(s["changed"] is False for s in patch["scopes"]), patch["scopes"]
    assert report["scope_diffs"] == []


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_context_against_the_drop_it_was_made_from_finds_nothing_to_review(drops, fmt: str) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(drops[fmt], VENDOR_ZIP)
    assert code == 0
    _nothing_changed(report)
    assert report["records"]["old"] == {"origin": VENDOR_ZIP.name, "origin_sha256": _sha(VENDOR_ZIP),
                                        "patches": SERIES}
    assert report["records"]["new"] is None
    assert all(s["note"] == "as patched" for p in report["patches"] for s in p["scopes"])
    assert report["next"] == f"patcher apply {VENDOR_ZIP}"


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_drop_against_a_context_made_from_it_finds_nothing_to_review(drops, fmt: str) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(VENDOR_ZIP, drops[fmt])
    assert code == 0
    _nothing_changed(report)
    assert report["records"]["old"] is None and report["records"]["new"]["patches"] == SERIES


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_context_against_a_drop_whose_v2_call_gained_an_argument_finds_that_change(drops, reference, fmt: str) -> None:  # type: ignore[no-untyped-def]
    ref_code, ref = reference
    code, report = _upgrade(drops[fmt], drops["new"])
    assert code == ref_code == 1
    assert _bindings(report) == _bindings(ref) == [(2, 1, "V2_ARGS")]
    [capture], [ref_capture] = patch_of(report, "three-tier-decode")["captures"], patch_of(ref, "three-tier-decode")["captures"]
    # OLD's code is not recorded, only its fingerprint; NEW's is read from NEW.
    assert (capture["old"], capture["new"]) == (AS_RECORDED, ref_capture["new"])
    assert ref_capture["new"].endswith(", fp8_out_scale")
    assert _reasons(report)[0] == _reasons(ref)[0] == \
        "patch three-tier-decode: applies, but what it captured changed: step 2 V2_ARGS"
    # The same scope changed, judged on both drops as patched: one added argument, nothing else.
    assert [(r["subject"], r["severity"]) for r in report["verdict"]["reasons"]] == \
        [(r["subject"], r["severity"]) for r in ref["verdict"]["reasons"]]
    [diff] = report["scope_diffs"]
    assert (diff["scope"], diff["note"], diff["patches"]) == (DECODE, "as patched", ["three-tier-decode"])
    added = [line for line in diff["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(added) == 1 and "fp8_out_scale" in added[0]
    assert diff["diff"].startswith(f"--- a/{SHIPPED} ({DECODE}, as patched)\n")
    for patch_id in SERIES[1:]:
        assert not patch_of(report, patch_id)["needs_review"]


def test_the_text_report_says_which_drop_is_read_as_recorded(drops) -> None:  # type: ignore[no-untyped-def]
    result = run_patcher("upgrade", drops["zip"], drops["new"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert f"OLD is a context apply wrote from {VENDOR_ZIP.name} (sha256 {_sha(VENDOR_ZIP)}): status and " \
           f"fingerprints as its {MANIFEST} records them on that drop for {', '.join(SERIES)}" in lines
    assert "scopes compared as patched on both drops (a context holds patched code)" in lines
    assert "patch three-tier-decode: applies (as recorded) -> applies (needs review)" in lines
    assert f"      before: {AS_RECORDED}" in lines
    markdown = run_patcher("upgrade", drops["zip"], drops["new"], "--format", "markdown").stdout
    assert f"OLD is a context apply wrote from {VENDOR_ZIP.name}" in markdown


def test_a_context_of_the_new_drop_finds_the_change_as_the_new_drop_does(drops, reference) -> None:  # type: ignore[no-untyped-def]
    _, ref = reference
    for old in (VENDOR_ZIP, drops["folder"]):  # the drop as OLD, then a context of it: both sides read as recorded
        code, report = _upgrade(old, drops["new-out"])
        assert code == 1
        assert _bindings(report) == _bindings(ref)
        assert _reasons(report)[0] == _reasons(ref)[0]
        assert [s["scope"] for s in report["scope_diffs"]] == [DECODE]
        assert patch_of(report, "three-tier-decode")["captures"][0]["new"] == AS_RECORDED
        assert report["records"]["new"]["origin"] == "v2-new"


def test_two_formats_of_one_context_find_nothing_to_review(drops) -> None:  # type: ignore[no-untyped-def]
    code, report = _upgrade(drops["tar.gz"], drops["folder"])
    assert code == 0
    _nothing_changed(report)


def _edited_copy(context: Path, into: Path) -> Path:
    """A folder context whose shipped copy was tuned by hand after apply wrote it."""
    edited = shutil.copytree(context, into)
    shipped = edited / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"# tuned by hand on the lab card\n")
    return edited


def test_a_context_edited_after_apply_is_compared_as_a_tree_with_a_note(drops, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    edited = _edited_copy(drops["folder"], tmp_path / "edited")
    code, report = _upgrade(edited, VENDOR_ZIP)
    assert code == 1
    assert report["records"]["old"] is None
    assert _reasons(report, "note") == [
        f"{edited}: {SHIPPED} changed since its {MANIFEST} was written; OLD is compared as a tree, its patches as found"]
    # As a tree: the patches are found already applied there, and its scopes are compared as they are.
    assert [(p["old"], p["new"]) for p in report["patches"]] == [("already-applied", "applies")] * 3
    assert all(s["note"] != "as patched" for p in report["patches"] for s in p["scopes"])
    code, report = _upgrade(VENDOR_ZIP, edited)
    assert code == 1 and report["records"]["new"] is None
    assert _reasons(report, "note")[0].endswith("NEW is compared as a tree, its patches as found")


def _unreadable(manifest: bytes) -> bytes:
    """The manifest cut short, as a copy interrupted mid-write leaves it."""
    return manifest[: len(manifest) // 2]


def _mistyped(manifest: bytes) -> bytes:
    """The manifest with a changed file's digest edited to null by hand."""
    data = json.loads(manifest)
    data["changed_files"][SHIPPED] = None
    return json.dumps(data).encode()


@pytest.mark.parametrize("spoil, why", [
    (_unreadable, "it is not JSON (JSONDecodeError)"),
    (_mistyped, f"changed_files['{SHIPPED}'] is not a sha256"),
])
def test_a_context_whose_manifest_does_not_read_is_compared_as_a_tree_with_a_note(  # type: ignore[no-untyped-def]
        drops, tmp_path: Path, spoil, why: str) -> None:
    forged = shutil.copytree(drops["folder"], tmp_path / "forged")
    (forged / MANIFEST).write_bytes(spoil((forged / MANIFEST).read_bytes()))
    code, report = _upgrade(VENDOR_ZIP, forged)
    assert code == 1
    assert _reasons(report, "note") == [
        f"{forged}: its {MANIFEST} is not one apply wrote ({why}); NEW is compared as a tree, its patches as found"]
    assert [(p["old"], p["new"]) for p in report["patches"]] == [("applies", "already-applied")] * 3


def test_a_note_escapes_what_a_hostile_manifest_says(drops, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    forged = shutil.copytree(drops["folder"], tmp_path / "forged")
    manifest = json.loads((forged / MANIFEST).read_text())
    manifest["patches"][0]["steps"][1]["matches"][0]["bindings"]["\x1b[2J"] = "not a digest"
    (forged / MANIFEST).write_text(json.dumps(manifest))
    result = run_patcher("upgrade", VENDOR_ZIP, forged)
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout
    assert "bindings.\\x1b[2J is not a sha256" in result.stdout


def test_a_forged_fingerprint_in_a_context_hides_no_change_of_its_code(drops, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # NEW's manifest claims the V2 call captured what the vendor drop's did: the record reads, and lies.
    forged = shutil.copytree(drops["new-out"], tmp_path / "forged")
    manifest = json.loads((forged / MANIFEST).read_text())
    honest = json.loads((drops["folder"] / MANIFEST).read_text())
    for lying, true in zip(manifest["patches"], honest["patches"]):
        lying["steps"] = true["steps"]
    (forged / MANIFEST).write_text(json.dumps(manifest))
    code, report = _upgrade(VENDOR_ZIP, forged)
    assert patch_of(report, "three-tier-decode")["captures"] == []  # the fingerprints are what the record says
    assert code == 1  # but the code NEW holds is compared as it is
    assert [s["scope"] for s in report["scope_diffs"]] == [DECODE]
    assert "fp8_out_scale" in report["scope_diffs"][0]["diff"]


def test_a_context_made_with_other_parameters_is_compared_as_found_with_a_note(drops, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gather0 = tmp_path / "gather0"
    result = run_patcher("apply", VENDOR_ZIP, "-o", gather0, "--set", "prefix-pregather.max_gather_tokens=0")
    assert result.exit_code == 0, result.stderr
    code, report = _upgrade(gather0, VENDOR_ZIP)
    assert code == 1
    assert _reasons(report, "note") == [f"patch prefix-pregather: OLD's {MANIFEST} records it with other parameters "
                                        "(max_gather_tokens=0), so its status on OLD is as found"]
    assert report["records"]["old"]["patches"] == ["three-tier-decode", "prefix-buffer-reuse"]
    assert patch_of(report, "prefix-pregather")["new"] == "applies"
    # What ships differs in that parameter alone, and the patched scopes show it.
    [diff] = report["scope_diffs"]
    changed = [line for line in diff["diff"].splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert [(line[0], line[1:].strip()) for line in changed] == [("-", "max_gather_tokens = 0"),
                                                                  ("+", "max_gather_tokens = 8192")]
    # Run with the parameters the context was made with, nothing differs.
    code, report = _upgrade(gather0, VENDOR_ZIP, "--set", "prefix-pregather.max_gather_tokens=0")
    assert code == 0
    _nothing_changed(report)


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
