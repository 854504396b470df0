"""Remember what the file rules found in a file, keyed by everything that decides it.

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
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..cache_store import Store, cache_root
from .base import Settings, Severity, Violation

FORMAT = 2  # 2: authenticated entries
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
    digest = hashlib.sha256()
    for module in sorted(Path(__file__).resolve().parent.glob("*.py")):
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
        self._store = Store(folder, MAX_ENTRY)
        self._writes = 0

    def key(self, data: bytes) -> str:
        """Return the entry name for a file with these bytes."""
        return hashlib.sha256(self.rules.encode() + b"\0" + data).hexdigest()

    def get(self, key: str, path: str) -> list[Violation] | None:
        """Return the findings stored under ``key``, placed at ``path``; None on a miss."""
        payload = self._store.read(key)
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
        if not self._store.write(key, json.dumps(meta).encode()):
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 1:
            self._store.prune(_KEEP)


def _is_finding(found: object) -> bool:
    """Tell whether ``found`` is ``[rule, severity, line, message]`` with each of its type."""
    return (isinstance(found, list) and len(found) == 4 and type(found[0]) is str and found[1] in _SEVERITIES
            and type(found[2]) is int and found[2] >= 0 and type(found[3]) is str)
