"""The patched-result cache: where it lives, what its key holds, which entries it trusts, how it prunes.

Written against the mutants of patcher/patchset/cache.py that survived the
fast tests (issue 13). Every test points the cache into tmp_path.
"""

from __future__ import annotations

import json
import os
import shutil
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from patcher import __version__
from patcher.patchset import cache
from patcher.patchset.cache import cache_dir, cached_patch_source
from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import Status, patch_source
from tests.test_patch_cache import ROOT, SHIPPED, patch_set, store  # noqa: F401  (fixtures shared with the cache's first tests)


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the cache had to patch itself (a miss), in order."""
    calls: list[str] = []

    def counting(path: str, source: bytes, patches: Any) -> Any:
        calls.append(path)
        return patch_source(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    return calls


def _patches(patch_set: PatchSet) -> Any:
    return patch_set.for_target(patch_set.patches[0].target)


def _summary(outcome: Any) -> tuple[Any, ...]:
    return (outcome.path, outcome.original, outcome.patched, outcome.parse_error,
            [(o.patch.id, o.status, o.detail, o.diagnostic, o.prints) for o in outcome.outcomes])


# --- where ---------------------------------------------------------------------------------


@pytest.fixture
def no_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder in tmp_path and none of the cache's variables set."""
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_without_settings_the_cache_is_under_the_home_folder(no_settings: Path) -> None:
    assert cache_dir() == no_settings / ".cache" / "patcher"


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_settings_count_as_unset(no_settings: Path, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, blank)
    assert cache_dir() == no_settings / ".cache" / "patcher"


def test_the_explicit_folder_wins_over_xdg(tmp_path: Path, no_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "patcher"
    monkeypatch.setenv("PATCHER_CACHE_DIR", f" {tmp_path / 'mine'} ")
    assert cache_dir() == tmp_path / "mine"


@pytest.mark.parametrize(("setting", "off"), [("0", False), (" 0 ", False), ("1", True), ("yes", True), ("true", True)])
def test_patcher_no_cache_turns_it_off_unless_zero(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                                   setting: str, off: bool) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", setting)
    assert cache_dir() == (None if off else no_settings / ".cache" / "patcher")


def test_with_the_cache_off_every_call_patches_and_keeps_the_path(
    tmp_path: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch, computed: list[str]
) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    source = SHIPPED.read_bytes()
    first = cached_patch_source("vendor/paged_attn.py", source, _patches(patch_set))
    second = cached_patch_source("vendor/paged_attn.py", source, _patches(patch_set))
    assert computed == ["vendor/paged_attn.py"] * 2
    assert first.path == second.path == "vendor/paged_attn.py" and first.changed
    assert not (tmp_path / "cache").exists()


# --- what the key holds ----------------------------------------------------------------------


def test_the_key_holds_the_installed_libcst_and_jinja2_versions() -> None:
    cache._versions.cache_clear()
    try:
        assert cache._versions() == (f"libcst {version('libcst')}", f"jinja2 {version('jinja2')}")
    finally:
        cache._versions.cache_clear()


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir(parents=True)
    for file, text in files.items():
        (root / name / file).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("text", "found"), [
    ('__version__ = "1.2.3"\n', "1.2.3"),
    ("# Copyright Łukasz, 2024\n\"\"\"Fused kernels.\"\"\"\n\n__version__ = version = '1.9.0'\n", "1.9.0"),
    ('"""Docs."""\nimport sys\n__version__: str\n__version__ = "2.0rc1"  # bumped by CI\n', "2.0rc1"),
    ('VERSION = "3.0"\nversion = "3.0"\n', "unknown"),
    ('def __version__():\n    return "4.0"\n', "unknown"),
])
def test_a_version_is_the_one_assigned_in_the_file_else_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, found: str
) -> None:
    # No metadata is installed for these packages: without the assignment, "unknown".
    _package(tmp_path, "patcher_test_vendored", {"__init__.py": "", "_version.py": text})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cache._version_of("patcher_test_vendored", "_version.py") == found


def test_a_package_that_is_not_installed_has_an_unknown_version() -> None:
    assert cache._version_of("patcher_test_not_installed", "__init__.py") == "unknown"


def test_without_the_file_the_installed_metadata_says_the_version() -> None:
    assert cache._version_of("jinja2", "no_such_file.py") == version("jinja2")


def test_a_namespace_package_is_looked_up_in_each_of_its_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Split over two folders (no __init__.py): the first lacks the file.
    (tmp_path / "first" / "patcher_test_split").mkdir(parents=True)
    _package(tmp_path / "second", "patcher_test_split", {"_version.py": "__version__ = '5.1'\n"})
    monkeypatch.syspath_prepend(str(tmp_path / "second"))
    monkeypatch.syspath_prepend(str(tmp_path / "first"))
    assert cache._version_of("patcher_test_split", "_version.py") == "5.1"


@pytest.mark.parametrize("change", ["libraries", "tool", "code", "format"])
def test_other_libraries_or_another_patcher_miss(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch,
                                                 computed: list[str], change: str) -> None:
    source = SHIPPED.read_bytes()
    cached_patch_source("x.py", source, _patches(patch_set))
    cached_patch_source("x.py", source, _patches(patch_set))
    assert computed == ["x.py"]
    if change == "libraries":
        monkeypatch.setattr(cache, "_versions", lambda: ("libcst 0.4.0", f"jinja2 {version('jinja2')}"))
    elif change == "tool":
        monkeypatch.setattr(cache, "__version__", __version__ + ".post1")
    elif change == "code":
        monkeypatch.setattr(cache, "_code_digest", lambda: "an edited checkout")
    else:
        monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    cached_patch_source("x.py", source, _patches(patch_set))
    assert computed == ["x.py", "x.py"]
    assert len(list(store.iterdir())) == 2


def test_fewer_patches_or_another_order_miss(store: Path, patch_set: PatchSet, computed: list[str]) -> None:
    patches = _patches(patch_set)
    assert len(patches) >= 2
    source = SHIPPED.read_bytes()
    for series in (patches, patches[1:], patches[:-1], (patches[1], patches[0], *patches[2:])):
        outcome = cached_patch_source("x.py", source, series)
        assert [o.patch.id for o in outcome.outcomes] == [p.id for p in series]
    assert len(computed) == 4 and len(list(store.iterdir())) == 4


def test_an_edited_template_misses(tmp_path: Path, store: Path, computed: list[str]) -> None:
    shutil.copytree(ROOT / "patches", tmp_path / "set" / "patches")
    shutil.copytree(ROOT / "templates", tmp_path / "set" / "templates")
    source = SHIPPED.read_bytes()

    def run() -> Any:
        loaded = load_patch_set(tmp_path / "set" / "patches", templates=tmp_path / "set" / "templates", lazy=True)
        return cached_patch_source("x.py", source, _patches(loaded))

    before = run()
    run()
    template = sorted((tmp_path / "set" / "templates").rglob("*.j2"))[0]
    template.write_text(template.read_text() + "\n# reviewed\n")
    run()
    assert len(computed) == 2 and before.changed


# --- which entries are trusted -------------------------------------------------------------


CANNOT_PATCH = [
    (b"def broken(:\n", "it does not parse under Python"),
    (b"s = '\xe9'\n", "cannot be decoded"),
    (b"x = 1\r\ny = 2\nz = 3\r", "would not round-trip byte for byte"),
]


@pytest.mark.parametrize(("source", "error"), CANNOT_PATCH, ids=["broken", "not-utf8", "lone-cr"])
def test_a_file_that_cannot_be_patched_is_served_from_the_cache(
    store: Path, patch_set: PatchSet, computed: list[str], source: bytes, error: str
) -> None:
    cold = cached_patch_source("a.py", source, _patches(patch_set))
    warm = cached_patch_source("b.py", source, _patches(patch_set))
    assert computed == ["a.py"]
    assert error in (warm.parse_error or "") and warm.outcomes == () and warm.failed
    assert _summary(warm) == ("b.py", *_summary(cold)[1:])


def test_a_cached_failure_keeps_its_diagnostic_and_an_applied_patch_its_prints(
    store: Path, patch_set: PatchSet, computed: list[str]
) -> None:
    source = SHIPPED.read_bytes()
    patches = _patches(patch_set)
    half = source.replace(b"def forward_decode", b"def forward_decode_v0", 1)  # renamed upstream
    warm = []
    for data in (source, half):
        cold = cached_patch_source("x.py", data, patches)
        warm.append(cached_patch_source("x.py", data, patches))
        assert _summary(warm[-1]) == _summary(cold)
    assert len(computed) == 2
    assert all(o.status is Status.APPLIED and o.prints for o in warm[0].outcomes)
    failed = warm[1].outcomes[0]
    assert failed.status is Status.FAILED and failed.diagnostic is not None and failed.diagnostic.kind == "scope"
    assert "forward_decode_v0" in failed.message  # the close name, from the cached diagnostic


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
    source = SHIPPED.read_bytes()
    cold = cached_patch_source("x.py", source, _patches(patch_set))
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
    again = cached_patch_source("x.py", source, _patches(patch_set))
    assert computed == ["x.py", "x.py"]  # computed again
    assert _summary(again) == _summary(cold)
    assert sorted(p.name for p in store.iterdir()) == [entry.name]  # no temporary file left behind
    if damage != "folder":
        assert entry.read_bytes() == raw  # healed


# --- pruning -------------------------------------------------------------------------------


def _fill(store: Path, count: int) -> list[Path]:
    """COUNT entries of earlier runs, the first the oldest."""
    store.mkdir(parents=True)
    entries = []
    for n in range(count):
        old = store / f"{n:064x}"
        old.write_bytes(b'{"key": "old"}\n')
        os.utime(old, (1_700_000_000 + n, 1_700_000_000 + n))
        entries.append(old)
    return entries


def test_writing_beyond_the_limit_removes_the_least_recently_used(
    store: Path, patch_set: PatchSet, computed: list[str]
) -> None:
    entries = _fill(store, 512)
    # Another run's entry being written right now: hidden, and kept.
    other = store / f".{'e' * 64}.4242.0a1b2c3d.tmp"
    other.write_bytes(b"half written")
    source = SHIPPED.read_bytes()
    cached_patch_source("x.py", source, _patches(patch_set))
    names = {p.name for p in store.iterdir()}
    assert len(names) == 513 and other.name in names  # 512 entries and the other run's
    assert entries[0].name not in names and entries[1].name in names
    new = names - {p.name for p in entries} - {other.name}
    assert len(new) == 1


def test_a_hit_makes_an_entry_the_last_to_go(store: Path, patch_set: PatchSet, computed: list[str]) -> None:
    source = SHIPPED.read_bytes()
    cached_patch_source("x.py", source, _patches(patch_set))
    [hit] = store.iterdir()
    os.utime(hit, (1_500_000_000, 1_500_000_000))  # the oldest of all
    _fill_more = [store / f"{n:064x}" for n in range(511)]
    for n, old in enumerate(_fill_more):
        old.write_bytes(b"{}\n")
        os.utime(old, (1_700_000_000 + n, 1_700_000_000 + n))
    cached_patch_source("x.py", source, _patches(patch_set))  # a hit: now the most recent
    cached_patch_source("y.py", source.replace(b"torch", b"torch ", 1), _patches(patch_set))  # 513 entries
    names = {p.name for p in store.iterdir()}
    assert computed == ["x.py", "y.py"]
    assert len(names) == 512 and hit.name in names and _fill_more[0].name not in names


def test_at_the_limit_nothing_is_removed(store: Path, patch_set: PatchSet) -> None:
    entries = _fill(store, 511)
    cached_patch_source("x.py", SHIPPED.read_bytes(), _patches(patch_set))
    assert len(list(store.iterdir())) == 512 and all(e.exists() for e in entries)
