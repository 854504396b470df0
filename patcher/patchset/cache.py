"""Remember what a patch series did to a file, keyed by everything that decides it.

``apply``, ``diff`` and ``verify-sync`` run many times a day on the same
vendor drop. Patching a target is a pure function of its bytes, the
rendered patches and the code that runs them, so its result is stored
under a key made of exactly those: the sha256 of the target's bytes, a
digest of the rendered patches for it, the tool's version, libcst's
version, the Python that runs it (a file libcst cannot parse is described
with what this interpreter's own parser makes of it) and a digest of the
patching code itself (an editable install changes that code without
changing the version).

An entry is never trusted blindly: it holds its own key and the sha256
of the patched bytes, and is used only if both check out and it names the
same patches in the same order; anything else is a miss, and the result
is computed again. Entries are written atomically, so concurrent runs at
worst each compute the same result.

Location: ``$PATCHER_CACHE_DIR``, else ``$XDG_CACHE_HOME/patcher``, else
``~/.cache/patcher``. ``PATCHER_NO_CACHE=1`` turns it off. Deleting the
folder is always safe.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import os
import secrets
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .. import __version__

if TYPE_CHECKING:
    from .model import Patch
    from .runner import FileOutcome

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
    key = _key(source, patches) if folder is not None else None
    if folder is None or key is None:
        return patch_source(path, source, patches)
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


def _key(source: bytes, patches: Sequence[Patch]) -> str | None:
    from libcst._version import __version__ as LIBCST_VERSION

    try:
        rendered = json.dumps([fingerprint(p) for p in patches], sort_keys=True)
    except TypeError:
        return None  # something this module cannot describe: do not cache it
    parts = [f"format {FORMAT}", __version__, LIBCST_VERSION, sys.version, _code_digest(),
             hashlib.sha256(source).hexdigest(), hashlib.sha256(rendered.encode()).hexdigest()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def fingerprint(value: Any) -> Any:
    """Describe VALUE as JSON-ready data that changes whenever it does; TypeError if unknown."""
    import libcst as cst

    from ..transforms.pattern import Pattern

    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__name__, value.name]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, cst.CSTNode):
        return ["code", cst.Module([]).code_for_node(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, Pattern):
            fields.pop("statements", None)  # parsed from 'source', which is kept
        return [type(value).__module__ + "." + type(value).__qualname__,
                {name: fingerprint(item) for name, item in fields.items()}]
    if isinstance(value, Mapping):
        return [[fingerprint(k), fingerprint(v)] for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]
    if isinstance(value, (list, tuple)):
        return [fingerprint(item) for item in value]
    raise TypeError(f"cannot fingerprint {type(value).__name__}")


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """Digest the modules whose code decides a patched result."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    modules = [package / "syntax.py"]  # the field walker the pattern engine matches with
    for folder in ("patchset", "transforms"):
        modules += sorted((package / folder).glob("*.py"))
    for module in modules:
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(entry: Path, key: str, path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome | None:
    from .runner import FileOutcome, PatchOutcome, Status

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
        if [r[0] for r in recorded] != [p.id for p in patches]:
            return None
        outcomes = tuple(PatchOutcome.from_record(p, r) for p, r in zip(patches, recorded))
        parse_error = meta["parse_error"]
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
            temp.unlink(missing_ok=True)
        except OSError:
            pass


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
