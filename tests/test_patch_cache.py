"""The patched-result cache: hits give the same outcome, and anything doubtful is a miss."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from patcher.patchset import cache
from patcher.patchset.cache import cache_dir, cached_patch_source
from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import patch_source

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "fixtures" / "vendor" / "enginex-vllm-bi100-qwen36-main" / "qwen3_6_scripts" / "paged_attn.py"


@pytest.fixture(scope="module")
def patch_set() -> PatchSet:
    return load_patch_set(ROOT / "patches", templates=ROOT / "templates")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "patched"


def _patches(patch_set: PatchSet):  # type: ignore[no-untyped-def]
    return patch_set.for_target(patch_set.patches[0].target)


def _summary(outcome):  # type: ignore[no-untyped-def]
    return (outcome.path, outcome.original, outcome.patched, outcome.parse_error,
            [(o.patch.id, o.status, o.detail) for o in outcome.outcomes])


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def counting(path, source, patches):  # type: ignore[no-untyped-def]
        calls.append(path)
        return patch_source(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    return calls


def test_a_hit_gives_the_outcome_a_cold_run_gives(store: Path, patch_set: PatchSet,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    source = SHIPPED.read_bytes()
    cold = cached_patch_source("a/paged_attn.py", source, _patches(patch_set))
    warm = cached_patch_source("b/paged_attn.py", source, _patches(patch_set))
    assert calls == ["a/paged_attn.py"]  # the second came from the cache
    assert _summary(warm)[1:] == _summary(cold)[1:] and warm.path == "b/paged_attn.py"
    assert _summary(cold) == _summary(patch_source("a/paged_attn.py", source, _patches(patch_set)))
    assert len(list(store.iterdir())) == 1


def test_other_bytes_or_other_parameters_miss(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    source = SHIPPED.read_bytes()
    cached_patch_source("x.py", source, _patches(patch_set))
    cached_patch_source("x.py", source.replace(b"\n", b"\r\n"), _patches(patch_set))
    other = load_patch_set(ROOT / "patches", templates=ROOT / "templates",
                           overrides=["three-tier-decode.small_max=4096"])
    cached_patch_source("x.py", source, _patches(other))
    assert len(calls) == 3
    assert len(list(store.iterdir())) == 3


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other-key"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(store: Path, patch_set: PatchSet,
                                                    monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    source = SHIPPED.read_bytes()
    cold = cached_patch_source("x.py", source, _patches(patch_set))
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
    calls = _spy(monkeypatch)
    again = cached_patch_source("x.py", source, _patches(patch_set))
    assert calls == ["x.py"]
    assert _summary(again) == _summary(cold)
    assert entry.read_bytes() == raw  # healed


def test_no_cache_env_turns_it_off(tmp_path: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    assert cache_dir() is None
    cached_patch_source("x.py", SHIPPED.read_bytes(), _patches(patch_set))
    assert not (tmp_path / "cache").exists()


def test_default_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PATCHER_NO_CACHE", "PATCHER_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "patcher"


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, patch_set: PatchSet,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(blocker))
    outcome = cached_patch_source("x.py", SHIPPED.read_bytes(), _patches(patch_set))
    assert outcome.changed and not outcome.failed


def test_failures_and_parse_errors_round_trip(store: Path, patch_set: PatchSet) -> None:
    for source in (b"def broken(:\n", b"class PagedAttention:\n    pass\n"):
        cold = cached_patch_source("x.py", source, _patches(patch_set))
        warm = cached_patch_source("x.py", source, _patches(patch_set))
        assert cold.failed and _summary(warm) == _summary(cold)


def _copy_set(tmp_path: Path) -> Path:
    """A writable copy of the shipped patch set with its templates beside it."""
    shutil.copytree(ROOT / "patches", tmp_path / "set" / "patches")
    shutil.copytree(ROOT / "templates", tmp_path / "set" / "templates")
    return tmp_path / "set" / "patches"


def _digests(folder: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    loaded = load_patch_set(folder, overrides=overrides, templates=folder.parent / "templates", lazy=True)
    return [p.code.digest for p in loaded.patches]


def test_the_digest_changes_with_what_a_patch_is_built_from(tmp_path: Path) -> None:
    folder = _copy_set(tmp_path)
    first = _digests(folder)
    assert _digests(folder) == first and len(set(first)) == len(first)  # stable, and one per patch
    # A parameter value changes only its own patch's digest.
    tiered = _digests(folder, ("three-tier-decode.small_max=4096",))
    assert [a == b for a, b in zip(first, tiered)] == [p != "three-tier-decode" for p in _ids(folder)]
    # So does an edit to a patch's own table (here only the spacing inside a pattern);
    # spacing in the TOML around it is not part of the table and changes nothing.
    patch_file = folder / "prefix-buffer-reuse.toml"
    patch_file.write_text(patch_file.read_text().replace("after = ", "after   =   ", 1))
    assert _digests(folder) == first
    patch_file.write_text(patch_file.read_text().replace('"o = $STATE"', '"o  =  $STATE"', 1))
    edited = _digests(folder)
    assert [a == b for a, b in zip(first, edited)] == [p != "prefix-buffer-reuse" for p in _ids(folder)]
    # Any template can be rendered by any patch: an edit to one changes them all.
    template = sorted((folder.parent / "templates").rglob("*.j2"))[0]
    template.write_text(template.read_text() + "\n")
    assert not set(_digests(folder)) & set(edited)


def _ids(folder: Path) -> list[str]:
    return [p.id for p in load_patch_set(folder, templates=folder.parent / "templates", lazy=True).patches]


def test_a_hit_neither_renders_nor_parses_a_patch(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = SHIPPED.read_bytes()
    warm = load_patch_set(ROOT / "patches", templates=ROOT / "templates", lazy=True)
    cold = cached_patch_source("x.py", source, _patches(warm))  # builds the steps
    fresh = load_patch_set(ROOT / "patches", templates=ROOT / "templates", lazy=True)
    hit = cached_patch_source("x.py", source, _patches(fresh))
    assert _summary(hit) == _summary(cold)
    assert all("built" not in vars(p.code) for p in fresh.patches)  # never built: the key needed none of it


def test_another_python_misses(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file libcst cannot parse is described with what this interpreter's parser
    # makes of it ("it parses under Python 3.11 ..."): another Python must not reuse it.
    calls = _spy(monkeypatch)
    cached_patch_source("x.py", b"def broken(:\n", _patches(patch_set))
    monkeypatch.setattr(sys, "version", "3.10.12 (another build)")
    cached_patch_source("x.py", b"def broken(:\n", _patches(patch_set))
    assert calls == ["x.py", "x.py"]
