"""A patched-result entry changes nothing that ships: forged, damaged or odd entries are misses that the fresh result overwrites."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patcher.patchset import cache
from patcher.patchset.cache import MAX_ENTRY, cached_patch_source
from patcher.patchset.model import Patch, PatchSet
from patcher.patchset.runner import patch_source
from tests.fixtures_hostile_cache import deep_json, forge, never_blocks, not_a_file, payload_of, private_config, sign
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE
from tests.patchset.conftest import cache_summary, shipped_patches

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config

SOURCE = (VENDOR_TREE / SHIPPED).read_bytes()
# The scope the first patch needs, renamed: that patch fails, with a diagnostic naming the close scope.
RENAMED = SOURCE.replace(b"def forward_decode", b"def forward_decode_v0", 1)


@pytest.fixture
def patches(patch_set: PatchSet) -> tuple[Patch, ...]:
    """The shipped set's patches of the shipped file (``patch_set`` and ``computed`` are the folder's conftest's)."""
    return tuple(shipped_patches(patch_set))


@pytest.fixture(scope="module")
def uncached(patch_set: PatchSet) -> dict[bytes, tuple[str, bytes, tuple[Any, ...]]]:
    """Per source: the entry's name, the payload a run writes there, and the outcome with no cache at all."""
    patches = tuple(shipped_patches(patch_set))
    found = {}
    for source in (SOURCE, RENAMED):
        outcome = patch_source("x.py", source, patches)
        key = cache._key(source, patches)
        found[source] = (key, cache._encode(key, outcome), cache_summary(outcome))
    return found


def test_a_run_writes_the_entry_these_tests_start_from(hermetic_cache: Path, patches: tuple[Patch, ...],
                                                       uncached: dict[bytes, Any]) -> None:
    for source in (SOURCE, RENAMED):
        cached_patch_source("x.py", source, patches)
        key, good, _ = uncached[source]
        assert payload_of(hermetic_cache / "patched" / key) == good
    assert len(list((hermetic_cache / "patched").iterdir())) == 2


class Warm:
    """The cache holding a good entry for one source, as a run leaves it; a test then spoils the entry."""

    def __init__(self, folder: Path, source: bytes, uncached: dict[bytes, Any]) -> None:
        self.source = source
        key, self.good, self.expected = uncached[source]
        self.entry = sign(folder / "patched", key, self.good)

    def meta(self) -> tuple[dict[str, Any], bytes]:
        """The good entry's header, decoded, and its patched bytes."""
        header, _, patched = self.good.partition(b"\n")
        return json.loads(header), patched

    def check(self, patches: tuple[Patch, ...], computed: list[str]) -> None:
        """A run gives the uncached outcome, and leaves the good entry, which the next run hits."""
        again = cached_patch_source("x.py", self.source, patches)
        assert computed == ["x.py"]  # a miss: computed again
        assert cache_summary(again) == self.expected
        assert payload_of(self.entry) == self.good  # overwritten with the fresh result
        assert cache_summary(cached_patch_source("x.py", self.source, patches)) == self.expected and computed == ["x.py"]


@pytest.fixture
def warm(hermetic_cache: Path, uncached: dict[bytes, Any]) -> Warm:
    return Warm(hermetic_cache, SOURCE, uncached)


def _payload(meta: Any, patched: bytes) -> bytes:
    return json.dumps(meta).encode() + b"\n" + patched


# --- forged: what anyone who can write the folder, without the key, can plant -----------


TROJAN = b"import triton  # planted\n"


def test_a_forged_entry_with_other_bytes_is_a_miss(warm: Warm, patches: tuple[Patch, ...],
                                                   computed: list[str]) -> None:
    meta, patched = warm.meta()
    planted = TROJAN + patched
    meta["sha256"] = hashlib.sha256(planted).hexdigest()  # consistent in every way the format can check
    forge(warm.entry.parent, warm.entry.name, _payload(meta, planted))
    warm.check(patches, computed)


def test_a_forged_entry_that_says_the_input_needs_no_patch_is_a_miss(
        warm: Warm, patches: tuple[Patch, ...], computed: list[str]) -> None:
    meta, _ = warm.meta()
    for record in meta["outcomes"]:
        record[1:] = ["already applied", "", None, []]
    meta["sha256"] = hashlib.sha256(SOURCE).hexdigest()
    forge(warm.entry.parent, warm.entry.name, _payload(meta, SOURCE))  # ships the vendor's file unpatched
    warm.check(patches, computed)


# --- damaged, though it verifies: decoding refuses anything the runner would not write ----


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(meta: dict[str, Any]) -> None:
        target: Any = meta
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return change


def _drop(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda meta: meta.pop(name)


APPLIED_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "status-a-number": _set(("outcomes", 0, 1), 1),
    "status-unknown": _set(("outcomes", 0, 1), "half applied"),
    "detail-a-number": _set(("outcomes", 0, 2), 3),
    "detail-null": _set(("outcomes", 0, 2), None),
    "diagnostic-a-string": _set(("outcomes", 0, 3), "closest: lines 1-2"),
    "prints-an-object": _set(("outcomes", 0, 4), {"step": 1}),
    "print-step-a-string": _set(("outcomes", 0, 4, 0, "step"), "1"),
    "print-step-a-bool": _set(("outcomes", 0, 4, 0, "step"), True),
    "print-step-a-float": _set(("outcomes", 0, 4, 0, "step"), 1.0),
    "match-code-numbers": _set(("outcomes", 0, 4, 0, "matches", 0, "code"), [1, 2]),
    "match-code-one-item": _set(("outcomes", 0, 4, 0, "matches", 0, "code"), ["only the hash"]),
    "bindings-a-list": _set(("outcomes", 0, 4, 0, "matches", 0, "bindings"), []),
    "binding-a-string": _set(("outcomes", 0, 4, 0, "matches", 0, "bindings", "X"), "x"),
    "match-extra-key": _set(("outcomes", 0, 4, 0, "matches", 0, "extra"), 1),
    "record-six-items": lambda meta: meta["outcomes"][0].append("extra"),
    "record-an-object": _set(("outcomes", 0), {"id": "three-tier-decode"}),
    "outcomes-an-object": _set(("outcomes",), {}),
    "parse-error-a-number": _set(("parse_error",), 5),
    "parse-error-empty": _set(("parse_error",), ""),
    "key-of-another-entry": _set(("key",), "0" * 64),
    "sha256-of-other-bytes": _set(("sha256",), "0" * 64),
    "no-sha256": _drop("sha256"),
    "an-extra-field": _set(("ships",), "anything"),
    "deeply-nested-prints": _set(("outcomes", 0, 4), json.loads(deep_json(500))),
    "failed-without-a-reason": lambda meta: _failed_without_a_reason(meta),
}


def _failed_without_a_reason(meta: dict[str, Any]) -> None:
    meta["outcomes"][0][1:3] = ["failed", ""]


@pytest.mark.parametrize("damage", sorted(APPLIED_DAMAGE))
def test_an_entry_of_the_wrong_shape_is_a_miss_that_is_overwritten(
        warm: Warm, patches: tuple[Patch, ...], computed: list[str], damage: str) -> None:
    meta, patched = warm.meta()
    APPLIED_DAMAGE[damage](meta)
    sign(warm.entry.parent, warm.entry.name, _payload(meta, patched))
    warm.check(patches, computed)


def _diagnostic(meta: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = meta["outcomes"][0][3]
    return found


DIAGNOSTIC_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "kind-unknown": lambda m: _diagnostic(m).update(kind="guess"),
    "scope-a-number": lambda m: _diagnostic(m).update(scope=7),
    "pattern-null": lambda m: _diagnostic(m).update(pattern=None),
    "step-a-string": lambda m: _diagnostic(m).update(step="2"),
    "scopes-of-numbers": lambda m: _diagnostic(m).update(scopes=[1, 2]),
    "closest-a-list": lambda m: _diagnostic(m).update(closest=[1]),
    "closest-lines-as-text": lambda m: _diagnostic(m).update(closest={
        "first_line": "1", "last_line": 2, "statement": 1, "matched": 0, "differing_tokens": 0,
        "pattern": "", "code": "", "inside": ""}),
    "closest-missing-fields": lambda m: _diagnostic(m).update(closest={"first_line": 1}),
    "no-text": lambda m: _diagnostic(m).pop("text"),
    "text-a-number": lambda m: _diagnostic(m).update(text=3),
    "an-extra-key": lambda m: _diagnostic(m).update(ships="anything"),
    "closest-code-a-number": lambda m: _diagnostic(m).update(closest={
        "first_line": 1, "last_line": 2, "statement": 1, "matched": 0, "differing_tokens": 0,
        "pattern": "use_v1 = True", "code": 5, "inside": ""}),
    "closest-pattern-null": lambda m: _diagnostic(m).update(closest={
        "first_line": 1, "last_line": 2, "statement": 1, "matched": 0, "differing_tokens": 0,
        "pattern": None, "code": "", "inside": ""}),
}


@pytest.mark.parametrize("damage", sorted(DIAGNOSTIC_DAMAGE))
def test_a_failure_whose_diagnostic_has_the_wrong_shape_is_a_miss(
        hermetic_cache: Path, uncached: dict[bytes, Any], patches: tuple[Patch, ...], computed: list[str],
        damage: str) -> None:
    failed = Warm(hermetic_cache, RENAMED, uncached)
    meta, patched = failed.meta()
    assert meta["outcomes"][0][1] == "failed" and meta["outcomes"][0][3]["kind"] == "scope"
    DIAGNOSTIC_DAMAGE[damage](meta)
    sign(failed.entry.parent, failed.entry.name, _payload(meta, patched))
    failed.check(patches, computed)


def _changed_with_nothing_applied(payload: bytes) -> bytes:
    header, _, patched = payload.partition(b"\n")
    meta = json.loads(header)
    for record in meta["outcomes"]:
        record[1:] = ["already applied", "", None, []]
    return _payload(meta, patched)  # patched bytes, though no patch says it applied


def _parse_error_with_other_bytes(payload: bytes) -> bytes:
    meta = json.loads(payload.partition(b"\n")[0])
    meta.update(outcomes=[], parse_error="line 1: it does not parse", sha256=hashlib.sha256(TROJAN).hexdigest())
    return _payload(meta, TROJAN)


def _unpatched_because(reason: Any) -> Callable[[bytes], bytes]:
    """An entry that says the file cannot be patched, for REASON, and ships the vendor's bytes as they are."""
    def change(payload: bytes) -> bytes:
        meta = json.loads(payload.partition(b"\n")[0])
        meta.update(outcomes=[], parse_error=reason, sha256=hashlib.sha256(SOURCE).hexdigest())
        return _payload(meta, SOURCE)
    return change


RAW_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "deep-json-header": lambda payload: deep_json() + b"\n" + payload.partition(b"\n")[2],
    "bad-utf8-header": lambda payload: b'{"key": "\xff\xfe"}\n' + payload.partition(b"\n")[2],
    "a-json-list": lambda payload: b"[1, 2]\n",
    "no-header": lambda payload: b"",
    "bytes-changed-with-nothing-applied": _changed_with_nothing_applied,
    "a-parse-error-with-other-bytes": _parse_error_with_other_bytes,
    "cannot-be-patched-for-an-empty-reason": _unpatched_because(""),
    "cannot-be-patched-for-a-numeric-reason": _unpatched_because(5),
    "cannot-be-patched-for-a-list-reason": _unpatched_because(["it does not parse"]),
}


@pytest.mark.parametrize("damage", sorted(RAW_DAMAGE))
def test_an_entry_that_does_not_decode_is_a_miss_that_is_overwritten(
        warm: Warm, patches: tuple[Patch, ...], computed: list[str], damage: str) -> None:
    sign(warm.entry.parent, warm.entry.name, RAW_DAMAGE[damage](warm.good))
    warm.check(patches, computed)


def test_running_out_of_memory_while_decoding_is_a_miss(warm: Warm, patches: tuple[Patch, ...],
                                                        computed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(cache.json, "loads", exhausted)
    again = cached_patch_source("x.py", SOURCE, patches)
    assert computed == ["x.py"] and cache_summary(again) == warm.expected


# --- not a file at all ----------------------------------------------------------------


NOT_A_FILE = not_a_file(MAX_ENTRY, folder_files=3)


@pytest.mark.parametrize("kind", sorted(NOT_A_FILE))
def test_an_entry_that_is_not_a_small_regular_file_is_a_miss_that_is_overwritten(
        warm: Warm, patches: tuple[Patch, ...], computed: list[str], kind: str) -> None:
    made = NOT_A_FILE[kind](warm.entry)
    try:
        with never_blocks(warm.entry) as stuck:
            warm.check(patches, computed)
        assert not stuck
    finally:
        if callable(made):
            made()  # close the socket
