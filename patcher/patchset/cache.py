"""Remember what a patch series did to a file, keyed by everything that decides it.

``apply``, ``diff`` and ``verify-sync`` run many times a day on the same
vendor drop. Patching a target is a pure function of its bytes, the
patches and the code that runs them, so its result is stored under a key
made of exactly those: the sha256 of the target's bytes, a digest of
what each patch for it is built from (``PatchCode.digest``: its table,
its parameter values and the templates folder), the tool's version, the
versions of libcst and Jinja2, the Python that runs it (a file libcst
cannot parse is described with what this interpreter's own parser makes
of it) and a digest of the patching code itself (an editable install
changes that code without changing the version). Computing the key
neither renders nor parses a patch: a run that hits loads neither
Jinja2 nor libcst.

An entry is never trusted blindly: it holds its own key and the sha256
of the patched bytes, and is used only if both check out and it names the
same patches in the same order (none, for a file that could not be parsed
or decoded); anything else is a miss, and the result is computed again. Entries are written atomically, so concurrent runs at
worst each compute the same result.

Location: ``$PATCHER_CACHE_DIR``, else ``$XDG_CACHE_HOME/patcher``, else
``~/.cache/patcher``. ``PATCHER_NO_CACHE=1`` turns it off. Deleting the
folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import __version__

if TYPE_CHECKING:
    from .model import Patch
    from .outcome import FileOutcome

# libcst and the runner are imported by the functions that use them: a
# command that imports the pipeline only to read a tree (check) loads neither.

FORMAT = 2  # 2: outcomes carry their diagnostic and fingerprints
_KEEP = 512  # entries kept; the oldest beyond this are removed when one is written


def cache_dir() -> Path | None:
    """Return the cache folder, or None when caching is turned off."""
    if os.environ.get("PATCHER_NO_CACHE", "").strip() not in ("", "0"):
        return None
    explicit = os.environ.get("PATCHER_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "patcher"


def cached_patch_source(path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome:
    """Return ``patch_source(path, source, patches)``, from the cache when it holds it."""
    folder = cache_dir()
    if folder is None:
        return patch_source(path, source, patches)
    key = _key(source, patches)
    entry = folder / "patched" / key
    hit = _read(entry, key, path, source, patches)
    if hit is not None:
        try:
            os.utime(entry)  # recently used: kept longest when pruning
        except OSError:
            pass
        return hit
    outcome = patch_source(path, source, patches)
    _write(entry, key, outcome)
    return outcome


def patch_source(path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome:
    """Run the series on one file: the runner's ``patch_source``, imported when first needed (it loads libcst)."""
    from .runner import patch_source as run

    return run(path, source, patches)


def _key(source: bytes, patches: Sequence[Patch]) -> str:
    parts = [f"format {FORMAT}", __version__, *_versions(), sys.version, _code_digest(),
             hashlib.sha256(source).hexdigest(), *(f"{p.id} {p.code.digest}" for p in patches)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@lru_cache(maxsize=1)
def _versions() -> tuple[str, ...]:
    """The versions of the libraries that render (Jinja2) and rewrite (libcst) a patch's code.

    Read from their source files: importing them to ask would cost a cached
    run what the cache saves it, and importlib.metadata alone costs a
    third of that.
    """
    return tuple(f"{name} {_version_of(name, file)}" for name, file in (("libcst", "_version.py"),
                                                                          ("jinja2", "__init__.py")))


def _version_of(package: str, file: str) -> str:
    """The ``__version__`` assigned in FILE of PACKAGE, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec(package)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in locations:
        try:
            text = (Path(folder) / file).read_text(encoding="utf-8")
        except OSError:
            continue
        # `__version__ = "1.2.3"`, also chained (`__version__ = version = '1.9.0'`).
        found = re.search(r"""^__version__\s*=\s*(?:\w+\s*=\s*)*["']([^"']+)["']""", text, re.MULTILINE)
        if found:
            return found.group(1)
    # Not where it usually is: ask the installed metadata.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """Digest the modules whose code decides a patched result."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    # The field walker the pattern engine matches with, the records an entry
    # holds, and the line diff that decides which patch wrote which line.
    modules = [package / "syntax.py", package / "records.py", package / "linediff.py"]
    for folder in ("patchset", "transforms"):
        modules += sorted((package / folder).glob("*.py"))
    for module in modules:
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(entry: Path, key: str, path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome | None:
    from .outcome import FileOutcome, PatchOutcome

    try:
        raw = entry.read_bytes()
    except OSError:
        return None
    header, _, patched = raw.partition(b"\n")
    try:
        meta = json.loads(header)
        if meta["key"] != key or meta["sha256"] != hashlib.sha256(patched).hexdigest():
            return None
        recorded = meta["outcomes"]
        parse_error = meta["parse_error"]
        # A file that cannot be patched (not parsed, not decoded) has no outcome per patch.
        if [r[0] for r in recorded] != ([] if parse_error is not None else [p.id for p in patches]):
            return None
        outcomes = tuple(PatchOutcome.from_record(p, r) for p, r in zip(patches, recorded))
    except (ValueError, KeyError, TypeError, IndexError):
        return None  # damaged, or written by another format: compute again
    return FileOutcome(path, source, patched, outcomes, parse_error)


def _write(entry: Path, key: str, outcome: FileOutcome) -> None:
    meta = {
        "key": key,
        "sha256": hashlib.sha256(outcome.patched).hexdigest(),
        "outcomes": [o.to_record() for o in outcome.outcomes],
        "parse_error": outcome.parse_error,
    }
    temp = entry.with_name(f".{entry.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(json.dumps(meta).encode() + b"\n" + outcome.patched)
        os.replace(temp, entry)
        _prune(entry.parent)
    except OSError:
        # A cache that cannot be written (read-only home, full disk) only
        # costs the next run its speed-up.
        try:
            temp.unlink()
        except OSError:
            pass  # never written, or already gone


def _prune(folder: Path) -> None:
    entries = [e for e in os.scandir(folder) if not e.name.startswith(".")]
    if len(entries) <= _KEEP:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for stale in entries[: len(entries) - _KEEP]:
        try:
            os.unlink(stale.path)
        except OSError:
            pass
