"""Which cache entries are trusted: a hit gives what a cold run gives; anything doubtful is a miss, and is healed.

An entry holds the whole outcome (failures with their diagnostic, applied
patches with their prints, files that cannot be patched); a damaged entry,
or one from another series or format, is computed again and rewritten,
leaving no temporary file. A hit renders and parses no patch.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from patcher.patchset.cache import cached_patch_source
from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import Status, patch_source

from tests.fixtures_patches import TEMPLATES, VENDOR_SOURCE, patch_toml, replace_step
from tests.fixtures_vendor import PATCHES
from tests.patchset.conftest import SOURCE, cache_summary, shipped_patches, spy_on_patching


def test_a_hit_gives_the_outcome_a_cold_run_gives(store: Path, patch_set: PatchSet,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy_on_patching(monkeypatch)
    source = VENDOR_SOURCE
    cold = cached_patch_source("a/paged_attn.py", source, shipped_patches(patch_set))
    warm = cached_patch_source("b/paged_attn.py", source, shipped_patches(patch_set))
    assert calls == ["a/paged_attn.py"]  # the second came from the cache
    assert cache_summary(warm)[1:] == cache_summary(cold)[1:] and warm.path == "b/paged_attn.py"
    assert cache_summary(cold) == cache_summary(patch_source("a/paged_attn.py", source, shipped_patches(patch_set)))
    assert len(list(store.iterdir())) == 1


def test_a_hit_neither_renders_nor_parses_a_patch(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = VENDOR_SOURCE
    warm = load_patch_set(PATCHES, templates=TEMPLATES, lazy=True)
    cold = cached_patch_source("x.py", source, shipped_patches(warm))  # builds the steps
    fresh = load_patch_set(PATCHES, templates=TEMPLATES, lazy=True)
    hit = cached_patch_source("x.py", source, shipped_patches(fresh))
    assert cache_summary(hit) == cache_summary(cold)
    assert all("built" not in vars(p.code) for p in fresh.patches)  # never built: the key needed none of it


def test_failures_and_parse_errors_round_trip(store: Path, patch_set: PatchSet) -> None:
    for source in (b"def broken(:\n", b"class PagedAttention:\n    pass\n"):
        cold = cached_patch_source("x.py", source, shipped_patches(patch_set))
        warm = cached_patch_source("x.py", source, shipped_patches(patch_set))
        assert cold.failed and cache_summary(warm) == cache_summary(cold)


CANNOT_PATCH = [
    (b"def broken(:\n", "it does not parse under Python"),
    (b"s = '\xe9'\n", "cannot be decoded"),
    (b"x = 1\r\ny = 2\nz = 3\r", "would not round-trip byte for byte"),
]


@pytest.mark.parametrize(("source", "error"), CANNOT_PATCH, ids=["broken", "not-utf8", "lone-cr"])
def test_a_file_that_cannot_be_patched_is_served_from_the_cache(
    store: Path, patch_set: PatchSet, computed: list[str], source: bytes, error: str
) -> None:
    cold = cached_patch_source("a.py", source, shipped_patches(patch_set))
    warm = cached_patch_source("b.py", source, shipped_patches(patch_set))
    assert computed == ["a.py"]
    assert error in (warm.parse_error or "") and warm.outcomes == () and warm.failed
    assert cache_summary(warm) == ("b.py", *cache_summary(cold)[1:])


def test_a_cached_failure_keeps_its_diagnostic_and_an_applied_patch_its_prints(
    store: Path, patch_set: PatchSet, computed: list[str]
) -> None:
    source = VENDOR_SOURCE
    patches = shipped_patches(patch_set)
    half = source.replace(b"def forward_decode", b"def forward_decode_v0", 1)  # renamed upstream
    warm = []
    for data in (source, half):
        cold = cached_patch_source("x.py", data, patches)
        warm.append(cached_patch_source("x.py", data, patches))
        assert cache_summary(warm[-1]) == cache_summary(cold)
    assert len(computed) == 2
    assert all(o.status is Status.APPLIED and o.prints for o in warm[0].outcomes)
    failed = warm[1].outcomes[0]
    assert failed.status is Status.FAILED and failed.diagnostic is not None and failed.diagnostic.kind == "scope"
    assert "forward_decode_v0" in failed.message  # the close name, from the cached diagnostic


def test_a_cached_step_failure_keeps_the_closest_code(store: Path, patch_set: PatchSet, computed: list[str]) -> None:
    # The vendor dropped the forced-V1 line: the step finds nothing, and its
    # message names the closest code, which a hit must give back as it was.
    source = VENDOR_SOURCE.replace(b"        use_v1 = True  # BI-V100: the V2 kernel is not available\n", b"")
    assert source != VENDOR_SOURCE
    cold = cached_patch_source("x.py", source, shipped_patches(patch_set))
    warm = cached_patch_source("x.py", source, shipped_patches(patch_set))
    assert computed == ["x.py"]  # the second came from the cache
    assert cache_summary(warm) == cache_summary(cold)
    failed = warm.outcomes[0]
    assert failed.status is Status.FAILED and failed.diagnostic is not None and failed.diagnostic.kind == "step"
    assert failed.diagnostic.closest is not None and failed.diagnostic.closest.pattern == "use_v1 = True"
    assert "closest: lines " in failed.message


def test_a_cached_missing_requirement_keeps_its_diagnostic(store: Path, computed: list[str], load_patch: Any) -> None:
    # The patch needs 'z = 9' in f, which the file lacks: it fails before any step runs.
    patches = [load_patch(patch_toml("edit", replace_step("y = 2", "y = 3"), header='requires = ["z = 9"]'))]
    cold = cached_patch_source("x.py", SOURCE, patches)
    warm = cached_patch_source("x.py", SOURCE, patches)
    assert computed == ["x.py"]  # the second came from the cache
    assert cache_summary(warm) == cache_summary(cold)
    failed = warm.outcomes[0]
    assert failed.status is Status.FAILED and failed.diagnostic is not None
    assert (failed.diagnostic.kind, failed.diagnostic.scope, failed.diagnostic.pattern) == ("requires", "f", "z = 9")
    assert failed.message == ("needs 'z = 9' in f, which is not there;"
                              " closest: line 2, statement 1 differs: pattern 'z = 9', code 'x = 1'")
    assert warm.patched == SOURCE


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other-key"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(store: Path, patch_set: PatchSet,
                                                    monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    source = VENDOR_SOURCE
    cold = cached_patch_source("x.py", source, shipped_patches(patch_set))
    [entry] = store.iterdir()
    raw = entry.read_bytes()
    header, _, body = raw.partition(b"\n")
    if damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        entry.write_bytes(header + b"\n" + body.replace(b"torch", b"torcH", 1))
    elif damage == "garbage":
        entry.write_bytes(b"\x00\xff not json\n")
    else:
        meta = json.loads(header)
        meta["key"] = hashlib.sha256(b"another file").hexdigest()
        entry.write_bytes(json.dumps(meta).encode() + b"\n" + body)
    calls = spy_on_patching(monkeypatch)
    again = cached_patch_source("x.py", source, shipped_patches(patch_set))
    assert calls == ["x.py"]
    assert cache_summary(again) == cache_summary(cold)
    assert entry.read_bytes() == raw  # healed


def _entry(store: Path) -> tuple[Path, dict[str, Any], bytes]:
    [entry] = store.iterdir()
    header, _, body = entry.read_bytes().partition(b"\n")
    return entry, json.loads(header), body


@pytest.mark.parametrize("damage", [
    "other-patches", "fewer-outcomes", "outcomes-not-a-list", "empty-record", "no-parse-error", "no-sha256",
    "parse-error-with-outcomes", "a-list-not-an-object", "folder",
])
def test_an_entry_from_another_series_or_format_is_a_miss(
    store: Path, patch_set: PatchSet, computed: list[str], damage: str
) -> None:
    source = VENDOR_SOURCE
    cold = cached_patch_source("x.py", source, shipped_patches(patch_set))
    entry, meta, body = _entry(store)
    raw = entry.read_bytes()
    if damage == "other-patches":
        meta["outcomes"][0][0] = "someone-elses-patch"
    elif damage == "fewer-outcomes":
        meta["outcomes"] = meta["outcomes"][1:]
    elif damage == "outcomes-not-a-list":
        meta["outcomes"] = 3
    elif damage == "empty-record":
        meta["outcomes"][0] = []
    elif damage == "no-parse-error":  # as an entry of an older format would be
        del meta["parse_error"]
    elif damage == "no-sha256":
        del meta["sha256"]
    elif damage == "parse-error-with-outcomes":
        meta["parse_error"] = "line 2, column 0: expected one of ), *, **, NAME"
    elif damage == "a-list-not-an-object":
        meta = [meta]  # type: ignore[assignment]
    if damage == "folder":
        entry.unlink()
        entry.mkdir()  # cannot be read, nor replaced
    else:
        entry.write_bytes(json.dumps(meta).encode() + b"\n" + body)
    again = cached_patch_source("x.py", source, shipped_patches(patch_set))
    assert computed == ["x.py", "x.py"]  # computed again
    assert cache_summary(again) == cache_summary(cold)
    assert sorted(p.name for p in store.iterdir()) == [entry.name]  # no temporary file left behind
    if damage != "folder":
        assert entry.read_bytes() == raw  # healed
