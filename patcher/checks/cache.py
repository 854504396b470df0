"""Remember what the file rules found in a file, and what a tree rule found in a build, keyed by what decides it.

A file rule's findings are a pure function of the file's bytes, the rules
that run with their severities and parameters, the code of
``patcher/checks`` and the Python that parses it (``ast`` follows the
interpreter's grammar). The key is made of exactly those; the path is not
part of it (file rules never read it), so equal files share an entry.

An entry is one small JSON payload holding its key, kept by
``patcher.cache_store``: authenticated with this user's secret key, so a
folder restored from elsewhere cannot plant findings (an empty list would
let a Triton kernel ship). A payload that verifies is still decoded
strictly; anything that does not check out, for any reason, is a miss,
the rules run again and their result overwrites it. Location and switch
are those of the patch cache (``patcher.cache_store.cache_root``), under
``checks/``.

A tree rule (``TreeRuleCache``) reads the whole build: the ship plan, the
patch set's targets, which shipped files mention its words, and whichever
files it chooses to read. Its key is made of all but the last (the plan
as a canonical digest of its value); the entry also records the sha256 of
every file the rule read, and is a hit only while each of those files
still has those bytes. Its key digests the code of ``patcher/shipping``
too: the plan is its work, and rules read install scripts through it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..cache_store import ENTRY_NAME, Store, cache_root
from .base import Settings, Severity, Violation

FORMAT = 2  # 2: authenticated entries
TREE_FORMAT = 1
_KEEP = 2048  # entries kept; the oldest beyond this are removed when one is written
_PRUNE_EVERY = 64  # look at the folder's size once in this many writes
MAX_ENTRY = 4 << 20  # bytes of payload: a larger entry is a miss unread, larger findings are not stored
_SEVERITIES = frozenset(s.value for s in Severity)


def cache_dir() -> Path | None:
    """Return the folder rule results are kept in, or None when caching is off."""
    base = cache_root()
    return None if base is None else base / "checks"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """Digest the code that decides a rule's findings: every module of ``patcher/checks``."""
    return _modules_digest(Path(__file__).resolve().parent)


@lru_cache(maxsize=1)
def tree_code_digest() -> str:
    """Digest the code that decides a tree rule's findings: ``patcher/checks`` and ``patcher/shipping``."""
    return hashlib.sha256((code_digest() + _modules_digest(Path(__file__).resolve().parent.parent / "shipping"))
                          .encode()).hexdigest()


def _modules_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for module in sorted(folder.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    return digest.hexdigest()


def rules_key(settings: Sequence[Settings]) -> str:
    """Digest the rules that run and how the policy sets them, with the code and the Python."""
    described = json.dumps([[s.rule, s.severity.value, sorted((k, repr(v)) for k, v in s.params.items())]
                            for s in settings])
    parts = [f"format {FORMAT}", sys.version, code_digest(), described]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class RuleCache:
    """Findings of the file rules by file content, on disk; a miss whenever anything does not check out.

    The folder is opened on the first ``get`` or ``put``, never before.
    """

    def __init__(self, folder: Path, settings: Sequence[Settings]):
        self.folder = folder
        self.rules = rules_key(settings)
        self.store = Store(folder, MAX_ENTRY)  # the tree rules' entries share it: the folder is opened once
        self._writes = 0

    def key(self, data: bytes) -> str:
        """Return the entry name for a file with these bytes."""
        return hashlib.sha256(self.rules.encode() + b"\0" + data).hexdigest()

    def get(self, key: str, path: str) -> list[Violation] | None:
        """Return the findings stored under ``key``, placed at ``path``; None on a miss."""
        payload = self.store.read(key)
        if payload is None:
            return None
        try:
            meta = json.loads(payload)
            if not (isinstance(meta, dict) and meta.keys() == {"key", "found"} and meta["key"] == key
                    and isinstance(meta["found"], list) and all(_is_finding(f) for f in meta["found"])):
                return None
            return [Violation(rule, Severity(severity), path, line, message)
                    for rule, severity, line, message in meta["found"]]
        except Exception:  # RecursionError (deep JSON), MemoryError, bad UTF-8: compute again
            return None

    def put(self, key: str, found: Sequence[Violation]) -> None:
        """Store ``found`` under ``key``; a cache that cannot be written only costs speed."""
        meta = {"key": key, "found": [[v.rule, v.severity.value, v.line, v.message] for v in found]}
        if not self.store.write(key, json.dumps(meta).encode()):
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 1:
            self.store.prune(_KEEP)


def _is_finding(found: object) -> bool:
    """Tell whether ``found`` is ``[rule, severity, line, message]`` with each of its type."""
    return (isinstance(found, list) and len(found) == 4 and type(found[0]) is str and found[1] in _SEVERITIES
            and type(found[2]) is int and found[2] >= 0 and type(found[3]) is str)


# --------------------------------------------------------------------------- tree rules


def value_digest(value: object) -> str:
    """Digest a value (the ship plan) by what it holds, whatever its identity, its sets' order or its ``repr``.

    Dataclasses by every field, mappings and sets in a sorted order, any
    other object by its attributes. Two values that hold the same get the
    same digest; a value this cannot see into gets its ``repr``, which can
    only make entries miss (an object's address), never match wrongly.
    """
    return hashlib.sha256(json.dumps(_canonical(value, 0), separators=(",", ":")).encode()).hexdigest()


def _canonical(value: object, depth: int) -> Any:
    if depth > 200:
        raise RecursionError("a value nested too deep to digest")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)  # nan and the infinities are not JSON
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, _canonical(value.value, depth + 1)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__qualname__, [[f.name, _canonical(getattr(value, f.name), depth + 1)]
                                           for f in dataclasses.fields(value)]]
    if isinstance(value, Mapping):
        return ["map", sorted(([_canonical(k, depth + 1), _canonical(v, depth + 1)] for k, v in value.items()),
                              key=json.dumps)]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted((_canonical(v, depth + 1) for v in value), key=json.dumps)]
    if isinstance(value, (list, tuple)):
        return [_canonical(v, depth + 1) for v in value]
    if isinstance(value, re.Pattern):
        return ["regex", value.pattern if isinstance(value.pattern, str) else repr(value.pattern), value.flags]
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not callable(value):
        return [type(value).__qualname__, _canonical(attributes, depth + 1)]
    return ["repr", type(value).__qualname__, repr(value)]


def file_digest(read: Callable[[str], bytes], path: str) -> str | None:
    """The sha256 of a context file as ``read`` gives it; None when there is no such file."""
    try:
        return hashlib.sha256(read(path)).hexdigest()
    except KeyError:
        return None


class TreeRuleCache:
    """Findings of tree rules, by what decides them; an entry is used only while the files it read are unchanged.

    Shares the file rules' folder (``checks/``); its entries decode only here.
    """

    def __init__(self, folder: Path, store: Store | None = None):
        self.folder = folder
        self._store = store if store is not None else Store(folder, MAX_ENTRY)
        self._writes = 0

    def key(self, settings: Settings, inputs: str) -> str:
        """Return the entry name for the rule ``settings`` declares, on a build whose other inputs digest to ``inputs``."""
        described = json.dumps([settings.rule, settings.severity.value,
                                sorted((k, repr(v)) for k, v in settings.params.items())])
        parts = [f"tree format {TREE_FORMAT}", sys.version, tree_code_digest(), described, inputs]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def get(self, key: str, read: Callable[[str], bytes]) -> list[Violation] | None:
        """Return the findings stored under ``key`` if every file they were read from still has its bytes; else None."""
        payload = self._store.read(key)
        if payload is None:
            return None
        try:
            meta = json.loads(payload)
            if not (isinstance(meta, dict) and meta.keys() == {"key", "found", "read"} and meta["key"] == key
                    and isinstance(meta["found"], list) and all(_is_placed_finding(f) for f in meta["found"])
                    and isinstance(meta["read"], list) and all(_is_file_read(r) for r in meta["read"])):
                return None
            for path, digest in meta["read"]:
                if file_digest(read, path) != digest:
                    return None  # a file the rule read has other bytes now: judge again
            return [Violation(rule, Severity(severity), path, line, message)
                    for rule, severity, path, line, message in meta["found"]]
        except Exception:  # RecursionError (deep JSON), MemoryError, bad UTF-8: compute again
            return None

    def put(self, key: str, found: Sequence[Violation], read: Mapping[str, str | None]) -> None:
        """Store ``found`` under ``key`` with the digests of the files read; a cache that cannot be written only costs speed."""
        meta = {"key": key, "found": [[v.rule, v.severity.value, v.path, v.line, v.message] for v in found],
                "read": [[path, digest] for path, digest in sorted(read.items())]}
        if not self._store.write(key, json.dumps(meta).encode()):
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 1:
            self._store.prune(_KEEP)


class Recorder:
    """A reader of the context's files that notes the sha256 of each file read (None: no such file)."""

    def __init__(self, read: Callable[[str], bytes]):
        self._read = read
        self.read: dict[str, str | None] = {}

    def __call__(self, path: str) -> bytes:
        try:
            data = self._read(path)
        except KeyError:
            self.read[path] = None
            raise
        self.read[path] = hashlib.sha256(data).hexdigest()
        return data


def _is_placed_finding(found: object) -> bool:
    """Tell whether ``found`` is ``[rule, severity, path, line, message]`` with each of its type."""
    return (isinstance(found, list) and len(found) == 5 and type(found[0]) is str and found[1] in _SEVERITIES
            and type(found[2]) is str and type(found[3]) is int and found[3] >= 0 and type(found[4]) is str)


def _is_file_read(entry: object) -> bool:
    """Tell whether ``entry`` is ``[path, sha256 or null]``."""
    return (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is str
            and (entry[1] is None or type(entry[1]) is str and ENTRY_NAME.match(entry[1]) is not None))
