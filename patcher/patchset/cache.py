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

The folder's content is not trusted (CI restores it from other
branches): ``patcher.cache_store`` keeps the entries, each authenticated
with this user's secret key, and hands back only payloads that verify.
A payload is then decoded strictly: every field of the expected type,
the same patches in the same order (none, for a file that could not be
parsed or decoded), the recorded sha256 of the patched bytes, and bytes
equal to the input when no patch applied. Anything else, for any
reason, is a miss: the result is computed again and overwrites it.

Location: ``$PATCHER_CACHE_DIR``, else ``$XDG_CACHE_HOME/patcher``, else
``~/.cache/patcher``, under ``patched/``. ``PATCHER_NO_CACHE=1`` turns
it off. Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import __version__
from ..cache_store import Store, cache_root

if TYPE_CHECKING:
    from .model import Patch
    from .outcome import FileOutcome

# libcst and the runner are imported by the functions that use them: a
# command that imports the pipeline only to read a tree (check) loads neither.

FORMAT = 3  # 2: outcomes carry their diagnostic and fingerprints; 3: authenticated entries
_KEEP = 512  # entries kept; the oldest beyond this are removed when one is written
MAX_ENTRY = 64 << 20  # bytes of payload: a larger entry is a miss unread, a larger result is not stored


def cache_dir() -> Path | None:
    """Return the cache folder, or None when caching is turned off."""
    return cache_root()


def cached_patch_source(path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome:
    """Return ``patch_source(path, source, patches)``, from the cache when it holds it."""
    folder = cache_dir()
    if folder is None:
        return patch_source(path, source, patches)
    key = _key(source, patches)
    with Store(folder / "patched", MAX_ENTRY) as store:
        payload = store.read(key)
        hit = None if payload is None else _decode(payload, key, path, source, patches)
        if hit is not None:
            return hit
        outcome = patch_source(path, source, patches)
        if store.write(key, _encode(key, outcome)):
            store.prune(_KEEP)
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


def _encode(key: str, outcome: FileOutcome) -> bytes:
    meta = {
        "key": key,
        "sha256": hashlib.sha256(outcome.patched).hexdigest(),
        "outcomes": [o.to_record() for o in outcome.outcomes],
        "parse_error": outcome.parse_error,
    }
    return json.dumps(meta).encode() + b"\n" + outcome.patched


def _decode(payload: bytes, key: str, path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome | None:
    """Read back what ``_encode`` wrote; None if anything in it is not what it writes, whatever the error."""
    from .outcome import FileOutcome, PatchOutcome, Status

    header, _, patched = payload.partition(b"\n")
    try:
        meta = json.loads(header)
        if not (isinstance(meta, dict) and meta.keys() == {"key", "sha256", "outcomes", "parse_error"}
                and meta["key"] == key and meta["sha256"] == hashlib.sha256(patched).hexdigest()):
            return None
        recorded, parse_error = meta["outcomes"], meta["parse_error"]
        if not (isinstance(recorded, list) and all(_is_record(r) for r in recorded)
                and (parse_error is None or isinstance(parse_error, str) and parse_error)):
            return None
        # A file that cannot be patched (not parsed, not decoded) has no outcome per patch.
        if [r[0] for r in recorded] != ([] if parse_error is not None else [p.id for p in patches]):
            return None
        outcomes = tuple(PatchOutcome.from_record(p, r) for p, r in zip(patches, recorded))
        # What the runner never gives: a failure without a reason, bytes changed with no patch applied.
        if any(o.status is Status.FAILED and not o.detail for o in outcomes):
            return None
        if patched != source and not any(o.status is Status.APPLIED for o in outcomes):
            return None
        return FileOutcome(path, source, patched, outcomes, parse_error)
    except Exception:  # RecursionError (deep JSON), MemoryError, bad UTF-8, a shape this did not foresee
        return None


_STATUSES = frozenset({"applied", "already applied", "failed"})
_DIAGNOSTIC = frozenset({"kind", "scope", "pattern", "step", "closest", "scopes", "text"})
_CLOSEST_INTS = frozenset({"first_line", "last_line", "statement", "matched", "differing_tokens"})
_CLOSEST_TEXTS = frozenset({"pattern", "code", "inside"})


def _is_record(record: Any) -> bool:
    """Tell whether ``record`` has the shape ``PatchOutcome.to_record`` gives, every field of its type."""
    return (isinstance(record, list) and len(record) == 5 and _all(str, record[0], record[2])
            and record[1] in _STATUSES and (record[3] is None or _is_diagnostic(record[3]))
            and isinstance(record[4], list) and all(_is_step_print(p) for p in record[4]))


def _is_diagnostic(data: Any) -> bool:
    if not (isinstance(data, dict) and data.keys() == _DIAGNOSTIC):
        return False
    closest = data["closest"]
    return (data["kind"] in ("step", "requires", "scope") and _all(str, data["scope"], data["pattern"], data["text"])
            and (data["step"] is None or _all(int, data["step"]))
            and isinstance(data["scopes"], list) and _all(str, *data["scopes"])
            and (closest is None or isinstance(closest, dict) and closest.keys() == _CLOSEST_INTS | _CLOSEST_TEXTS
                 and _all(int, *(closest[k] for k in _CLOSEST_INTS))
                 and _all(str, *(closest[k] for k in _CLOSEST_TEXTS))))


def _is_step_print(data: Any) -> bool:
    return (isinstance(data, dict) and data.keys() == {"step", "matches"} and _all(int, data["step"])
            and isinstance(data["matches"], list)
            and all(isinstance(m, dict) and m.keys() == {"code", "bindings"} and _is_print(m["code"])
                    and isinstance(m["bindings"], dict) and all(_is_print(b) for b in m["bindings"].values())
                    for m in data["matches"]))


def _is_print(data: Any) -> bool:
    return isinstance(data, list) and len(data) == 2 and _all(str, *data)


def _all(kind: type, *values: Any) -> bool:
    """Tell whether every value is exactly of ``kind`` (so True is not an int here)."""
    return all(type(v) is kind for v in values)
