"""Builders of what a cache folder restored from someone else's branch may hold, and a private key for each test.

Every builder makes the hostile thing on disk, at an entry's name, so a
test shows its shape. ``forge`` is what anyone without the user's secret
can write (a well-formed entry with a tag made with another key);
``sign`` writes through the real store, as someone holding the secret
(or a bug in patcher) would: the entry verifies and only decoding can
refuse it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from patcher.cache_store import TAG_SIZE, Store
from tests import fixtures_hostile_inputs as hostile_inputs


@pytest.fixture(autouse=True)
def private_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point XDG_CONFIG_HOME (where the cache key is made) at a fresh folder: no test writes ~/.config.

    Import it into a test module to use it there; subprocesses inherit it.
    """
    folder = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    monkeypatch.delenv("PATCHER_CACHE_KEY_FILE", raising=False)
    return folder


def key_path(config: Path) -> Path:
    """Where the cache key lives under a config folder (made on first use)."""
    return config / "patcher" / "cache-key"


def forge(folder: Path, key: str, payload: bytes, secret: bytes = b"the attacker's own key, not yours") -> Path:
    """Write an entry as someone without the user's secret can: the payload, tagged with another key."""
    tag = hmac.new(secret, os.fsencode(folder.name) + b"\0" + key.encode() + b"\0" + payload,
                   hashlib.sha256).hexdigest().encode()
    entry = folder / key
    _clear(entry)
    entry.write_bytes(payload + tag)
    return entry


def sign(folder: Path, key: str, payload: bytes) -> Path:
    """Write an entry that verifies (through the real store): only decoding stands between it and a run."""
    with Store(folder, max(len(payload), 1)) as store:
        assert store.write(key, payload)
    return folder / key


def payload_of(entry: Path) -> bytes:
    """The payload of an entry on disk (its tag cut off)."""
    return entry.read_bytes()[:-TAG_SIZE]


def deep_json(depth: int = 200_000) -> bytes:
    """JSON nested deeper than any parser's recursion limit: ``[[[...]]]``."""
    return b"[" * depth + b"]" * depth


def huge(entry: Path, size: int) -> Path:
    """Make ``entry`` a sparse file of ``size`` bytes (no disk used): bigger than any entry may be."""
    _clear(entry)
    with open(entry, "wb") as out:
        out.truncate(size)
    return entry


def fifo(entry: Path) -> Path:
    """Make ``entry`` a FIFO: opening it to read blocks until someone writes."""
    _clear(entry)
    return hostile_inputs.fifo(entry)


def unix_socket(entry: Path) -> socket.socket:
    """Make ``entry`` a listening Unix socket; close it after."""
    _clear(entry)
    _, server = hostile_inputs.unix_socket(entry)
    server.listen(1)
    return server


def folder_at(entry: Path, files: int = 0) -> Path:
    """Make ``entry`` a folder, empty or holding ``files`` files."""
    _clear(entry)
    entry.mkdir()
    for number in range(files):
        (entry / f"{number:064x}").write_text("someone's file\n")
    return entry


def link_to(entry: Path, target: Path) -> Path:
    """Make ``entry`` a symbolic link to ``target``."""
    _clear(entry)
    entry.symlink_to(target)
    return entry


def link_to_a_copy(entry: Path) -> Path:
    """Make ``entry`` a symbolic link to a copy of itself elsewhere: following the link would be a hit."""
    copy = entry.parent.parent / "elsewhere"
    copy.write_bytes(entry.read_bytes())
    return link_to(entry, copy)


def not_a_file(max_entry: int, folder_files: int = 2) -> dict[str, Callable[[Path], Any]]:
    """Each thing that can stand where a cache entry should be a small regular file, by name: a maker that puts it
    at the entry's path (a socket's maker gives back what closes it). ``max_entry``: the largest payload the cache
    reads; the huge file is one byte past it and its tag."""
    return {
        "fifo": fifo,
        "socket": lambda entry: unix_socket(entry).close,
        "empty-folder": folder_at,
        "full-folder": lambda entry: folder_at(entry, files=folder_files),
        "link": link_to_a_copy,
        "huge": lambda entry: huge(entry, max_entry + TAG_SIZE + 1),
    }


def user_files(folder: Path, count: int = 700) -> dict[Path, bytes]:
    """A user's folder of COUNT files, a third of them named like cache entries: what a linked cache folder may point to."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for number in range(count):
        name = f"{number:064x}" if number % 3 == 0 else f"notes-{number}.txt"
        path = folder / name
        path.write_bytes(b"a user's file %d\n" % number)
        os.utime(path, (1_000_000 + number, 1_000_000 + number))  # older than anything the cache writes
        made[path] = path.read_bytes()
    return made


@contextmanager
def never_blocks(*entries: Path) -> Iterator[list[bool]]:
    """Fail, instead of hanging the suite, if the code under test opens a FIFO among ``entries`` to read and waits.

    The guard is no measurement: it acts only if the body has not ended
    after a generous delay, by opening each FIFO's other end (which frees a
    reader stuck in ``open``), and records that it had to.
    """
    stuck: list[bool] = []
    done = threading.Event()

    def free() -> None:
        if done.wait(120):
            return
        stuck.append(True)
        for entry in entries:
            try:
                os.close(os.open(entry, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # nobody was reading it

    guard = threading.Thread(target=free, daemon=True)
    guard.start()
    try:
        yield stuck
    finally:
        done.set()
        guard.join()


def _clear(entry: Path) -> None:
    if entry.is_symlink() or entry.exists():
        if entry.is_dir() and not entry.is_symlink():
            for item in entry.iterdir():
                item.unlink()
            entry.rmdir()
        else:
            entry.unlink()
    entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
