"""Remember what the file rules found in a file, keyed by everything that decides it.

A file rule's findings are a pure function of the file's bytes, the rules
that run with their severities and parameters, the code of
``patcher/checks`` and the Python that parses it (``ast`` follows the
interpreter's grammar). The key is made of exactly those; the path is not
part of it (file rules never read it), so equal files share an entry.

An entry is one small JSON file holding its key; anything that does not
check out is a miss, and the rules run again. Entries are written
atomically. Location and switch are those of the patch cache
(``patcher.patchset.cache.cache_dir``), under ``checks/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..patchset.cache import cache_dir as patch_cache_dir  # loads neither libcst nor the runner
from .base import Settings, Severity, Violation

FORMAT = 1
_KEEP = 2048  # entries kept; the oldest beyond this are removed when one is written
_PRUNE_EVERY = 64  # look at the folder's size once in this many writes


def cache_dir() -> Path | None:
    """Return the folder rule results are kept in, or None when caching is off."""
    base = patch_cache_dir()
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
    """Findings of the file rules by file content, on disk; a miss whenever anything does not check out."""

    def __init__(self, folder: Path, settings: Sequence[Settings]):
        self.folder = folder
        self.rules = rules_key(settings)
        self._writes = 0

    def key(self, data: bytes) -> str:
        """Return the entry name for a file with these bytes."""
        return hashlib.sha256(self.rules.encode() + b"\0" + data).hexdigest()

    def get(self, key: str, path: str) -> list[Violation] | None:
        """Return the findings stored under ``key``, placed at ``path``; None on a miss."""
        try:
            meta = json.loads((self.folder / key).read_bytes())
            if meta["key"] != key:
                return None
            return [Violation(rule, Severity(severity), path, int(line), message)
                    for rule, severity, line, message in meta["found"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent, damaged, or written by another format: compute again

    def put(self, key: str, found: Sequence[Violation]) -> None:
        """Store ``found`` under ``key``; a cache that cannot be written only costs speed."""
        entry = self.folder / key
        temp = entry.with_name(f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        meta = {"key": key, "found": [[v.rule, v.severity.value, v.line, v.message] for v in found]}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(temp, entry)
        except OSError:
            try:
                temp.unlink(missing_ok=True)
            except OSError:
                pass
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 1:
            _prune(self.folder)


def _prune(folder: Path) -> None:
    try:
        entries = [e for e in os.scandir(folder) if not e.name.startswith(".")]
        if len(entries) <= _KEEP:
            return
        entries.sort(key=lambda e: e.stat().st_mtime)
    except OSError:
        return
    for stale in entries[: len(entries) - _KEEP]:
        try:
            os.unlink(stale.path)
        except OSError:
            pass
