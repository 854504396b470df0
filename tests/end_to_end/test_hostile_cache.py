"""Whatever the cache folder holds, ``patcher apply`` writes the bytes and says the words it would with PATCHER_NO_CACHE=1.

Each test runs apply three times on the same input: with the cache off
(the reference), with the cache on (filling it), then again after the
entries that run wrote were replaced with what someone who can write the
folder plants (a forged result, blank rule findings), what a damaged entry
holds, or a FIFO. The third run must match the first byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.fixtures_hostile_cache import deep_json, fifo, forge, never_blocks, payload_of, private_config, sign
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config

TRITON = "from vllm.attention.ops.prefix_prefill import context_attention_fwd  # planted\n"


Run = tuple[int, str, str, "bytes | None"]  # exit code, stdout, stderr, the bytes written (None: nothing)


def _apply(cli: Any, vendor: Path, monkeypatch: pytest.MonkeyPatch, *, cached: bool) -> Run:
    """Run apply; return its exit code, stdout, stderr and the bytes it wrote (None when it wrote nothing)."""
    if cached:
        monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    else:
        monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    output = Path(cli.cwd) / "out.tar.gz"
    if output.exists():
        output.unlink()
    result = cli("apply", vendor, "-o", "out.tar.gz")
    return result.exit_code, result.stdout, result.stderr, output.read_bytes() if output.exists() else None


def _entries(hermetic_cache: Path, area: str) -> list[Path]:
    found = sorted((hermetic_cache / area).iterdir())
    assert found, f"the cached run wrote no {area} entry"
    return found


def _forge_patched(hermetic_cache: Path) -> None:
    """A patched result that adds a Triton import, consistent in all the format can check; tagged without the key."""
    for entry in _entries(hermetic_cache, "patched"):
        header, _, patched = payload_of(entry).partition(b"\n")
        meta = json.loads(header)
        planted = TRITON.encode() + patched
        meta["sha256"] = hashlib.sha256(planted).hexdigest()
        forge(entry.parent, entry.name, json.dumps(meta).encode() + b"\n" + planted)


def _blank_rules(hermetic_cache: Path) -> None:
    """No findings for any file: the entry that would let a Triton kernel through; tagged without the key."""
    for entry in _entries(hermetic_cache, "checks"):
        forge(entry.parent, entry.name, json.dumps({"key": entry.name, "found": []}).encode())


def _damage(hermetic_cache: Path) -> None:
    """Entries that verify (someone with the key, or a bug) but hold JSON nested past any recursion limit."""
    for entry in _entries(hermetic_cache, "patched") + _entries(hermetic_cache, "checks"):
        sign(entry.parent, entry.name, deep_json() + b"\n")


def _fifos(hermetic_cache: Path) -> None:
    for entry in _entries(hermetic_cache, "patched") + _entries(hermetic_cache, "checks"):
        fifo(entry)


def _forge_and_blank(hermetic_cache: Path) -> None:
    _forge_patched(hermetic_cache)
    _blank_rules(hermetic_cache)


SPOIL: dict[str, Callable[[Path], None]] = {
    "forged-result": _forge_patched,
    "forged-result-and-blank-rules": _forge_and_blank,
    "damaged": _damage,
    "fifo": _fifos,
}


def _same_as_uncached(cli: Any, vendor: Path, hermetic_cache: Path, monkeypatch: pytest.MonkeyPatch,
                      spoil: Callable[[Path], None]) -> Run:
    reference = _apply(cli, vendor, monkeypatch, cached=False)
    assert not (hermetic_cache / "patched").exists()  # the reference touched no cache
    assert _apply(cli, vendor, monkeypatch, cached=True) == reference
    spoil(hermetic_cache)
    if spoil is _fifos:  # guarded: a run that opened one blocking would hang, not fail
        with never_blocks(*_entries(hermetic_cache, "patched"), *_entries(hermetic_cache, "checks")) as stuck:
            again = _apply(cli, vendor, monkeypatch, cached=True)
        assert not stuck
    else:
        again = _apply(cli, vendor, monkeypatch, cached=True)
    assert again == reference
    return reference


@pytest.mark.parametrize("kind", sorted(SPOIL))
def test_apply_writes_what_it_writes_uncached_whatever_the_entries_hold(
        cli: Any, hermetic_cache: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    code, stdout, stderr, written = _same_as_uncached(cli, VENDOR_ZIP, hermetic_cache, monkeypatch, SPOIL[kind])
    assert code == 0 and written is not None and stdout.strip() == "out.tar.gz"
    # The entries were overwritten with what this run computed: the spoiled ones are gone.
    for entry in _entries(hermetic_cache, "patched") + _entries(hermetic_cache, "checks"):
        assert entry.is_file() and b"planted" not in entry.read_bytes()


def test_blank_rule_findings_do_not_let_a_triton_kernel_ship(cli: Any, hermetic_cache: Path, vendor_copy: Path,
                                                            make_zip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = vendor_copy / SHIPPED
    shipped.write_bytes(TRITON.encode() + shipped.read_bytes())
    vendor = make_zip(vendor_copy)
    code, _, stderr, written = _same_as_uncached(cli, vendor, hermetic_cache, monkeypatch, _blank_rules)
    assert code == 2 and written is None
    assert "no-triton-kernels: imports context_attention_fwd" in stderr


def test_a_cache_folder_others_can_write_is_not_used_and_says_so_once(
        cli: Any, hermetic_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, stderr, written = _apply(cli, VENDOR_ZIP, monkeypatch, cached=False)
    (hermetic_cache / "checks").mkdir(parents=True, mode=0o700)
    os.chmod(hermetic_cache, 0o777)
    warning = (f"warning: {hermetic_cache}: the cache folder can be written by group or others (mode 0777); "
               f"the cache is off for this run (chmod -R go-w {hermetic_cache})\n")
    assert _apply(cli, VENDOR_ZIP, monkeypatch, cached=True) == (code, stdout, stderr + warning, written)
    assert code == 0 and written is not None
    assert not list((hermetic_cache / "checks").iterdir())  # nothing read or written there
