"""Keep cache entries in a folder whose content is not trusted: authenticated, never followed, pruned by name.

CI systems restore the cache folder from other branches, so anyone who
can push a branch may have written what is in it. Nothing read from it is
believed unless it proves it was written by someone holding this user's
secret: every entry ends with an HMAC-SHA256 tag (64 hex digits) over its
area, its name and its payload, keyed with a secret kept outside the
cache folder (the cache key file, ``key_file``). An entry that does not
verify, or is not a regular file of a sane size, is a miss; the caller
computes the result again and its write replaces the entry.

The folder itself is held the way OpenSSH's StrictModes and git's
safe.directory hold theirs: the cache root and each area (``patched/``,
``checks/``) must be real folders (not symbolic links), owned by this
user and writable by nobody else, or the cache is off for the run with one
warning. Both are opened once and every entry is reached relative to the
open folder with ``O_NOFOLLOW``, so swapping a folder for a link after
the check leads nowhere. Pruning unlinks only regular files whose names
are ones this module writes (64 hex digits, or its temporary name).

Warnings are values: ``take_warnings`` hands them to the command line,
which prints them; core code never prints.
"""

from __future__ import annotations

import errno
import hmac
import os
import re
import secrets
import stat
import time
from hashlib import sha256
from pathlib import Path

TAG_SIZE = 64  # HMAC-SHA256 in hex, at the end of the entry: the payload stays readable text
KEY_MIN = 32  # characters of secret, at least: 128 bits and more
_KEY_MAX = 4096  # a key file is read up to this; a longer one is refused
_STALE_TEMP_S = 3600  # a temporary file this old belongs to a run that died

ENTRY_NAME = re.compile(r"[0-9a-f]{64}\Z")
TEMP_NAME = re.compile(r"\.[0-9a-f]{64}\.[0-9]+\.[0-9a-f]{8}\.tmp\Z")

_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))

_warnings: dict[str, None] = {}  # in the order they arose, each once


def supported() -> bool:
    """Tell whether this platform can open entries without following links (POSIX can; Windows cannot)."""
    return (hasattr(os, "O_NOFOLLOW") and hasattr(os, "geteuid") and os.open in os.supports_dir_fd
            and os.scandir in os.supports_fd)


def cache_root() -> Path | None:
    """Return the cache folder, or None when caching is turned off (``PATCHER_NO_CACHE``)."""
    if os.environ.get("PATCHER_NO_CACHE", "").strip() not in ("", "0"):
        return None
    explicit = os.environ.get("PATCHER_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "patcher"


def key_file() -> tuple[Path, bool]:
    """Return where the cache key lives, and whether the user named it (``PATCHER_CACHE_KEY_FILE``).

    By default ``$XDG_CONFIG_HOME/patcher/cache-key``, else
    ``~/.config/patcher/cache-key``: configuration, not cache, so a CI job
    that restores the cache folder does not restore the key with it.
    """
    explicit = os.environ.get("PATCHER_CACHE_KEY_FILE", "").strip()
    if explicit:
        return Path(explicit), True
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".config") / "patcher" / "cache-key", False


def take_warnings() -> tuple[str, ...]:
    """Return the warnings noted since the last call (each once), and forget them."""
    found = tuple(_warnings)
    _warnings.clear()
    return found


def _warn(where: Path, what: str, hint: str) -> None:
    _warnings[f"{where}: {what}; the cache is off for this run ({hint})"] = None


def _me() -> int:
    # The user every folder and the key must belong to; a test stands in another.
    return os.geteuid()


class Store:
    """One area of the cache (a folder of entries named by key), opened when first used.

    ``folder`` is the area; its parent is the cache root. Entries hold at
    most ``max_bytes`` of payload: a larger file is a miss unread, and a
    larger payload is not stored.
    """

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._fd: int | None = None
        self._secret = b""
        self._tried = False

    def read(self, key: str) -> bytes | None:
        """Return the payload stored under ``key`` if it verifies; None for anything else.

        The entry is opened without following a link and without blocking
        (a FIFO), and read only if it is a regular file of at most the
        area's size; a hit marks it recently used.
        """
        if not ENTRY_NAME.match(key) or not self._open():
            return None
        try:
            fd = os.open(key, _READ, dir_fd=self._fd)
        except OSError:
            return None  # absent, a link, a socket, unreadable
        try:
            info = os.fstat(fd)
            limit = self.max_bytes + TAG_SIZE
            if not stat.S_ISREG(info.st_mode) or not TAG_SIZE <= info.st_size <= limit:
                return None
            raw = _read_at_most(fd, limit + 1)  # the size may have changed since fstat
            if not TAG_SIZE <= len(raw) <= limit:
                return None
            payload, tag = raw[:-TAG_SIZE], raw[-TAG_SIZE:]
            if not hmac.compare_digest(tag, self._tag(key, payload)):
                return None
            try:
                os.utime(fd)  # recently used: kept longest when pruning
            except OSError:
                pass
            return payload
        except (OSError, MemoryError):
            return None
        finally:
            os.close(fd)

    def write(self, key: str, payload: bytes) -> bool:
        """Store ``payload`` under ``key``, atomically, replacing whatever has that name; say whether it was stored.

        A cache that cannot be written (read-only home, full disk) only
        costs the next run its speed-up.
        """
        if not ENTRY_NAME.match(key) or len(payload) > self.max_bytes or not self._open():
            return False
        temp = f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(temp, _CREATE, 0o600, dir_fd=self._fd)
            with os.fdopen(fd, "wb") as out:
                out.write(payload)
                out.write(self._tag(key, payload))
            self._replace(temp, key)
            return True
        except OSError:
            try:
                os.unlink(temp, dir_fd=self._fd)
            except OSError:
                pass  # never written, or already gone
            return False

    def prune(self, keep: int) -> None:
        """Remove the least recently used entries beyond ``keep``, and temporary files of runs that died.

        Only regular files whose names this module writes are removed,
        by name inside the open folder: a link is never followed, a
        file of any other name never touched.
        """
        if not self._open():
            return
        entries: list[tuple[float, str]] = []
        stale: list[str] = []
        now = time.time()
        try:
            with os.scandir(self._fd) as found:  # the open folder, by its descriptor
                for item in found:
                    name = item.name
                    entry = ENTRY_NAME.match(name) is not None
                    if not entry and TEMP_NAME.match(name) is None:
                        continue
                    info = item.stat(follow_symlinks=False)
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    if entry:
                        entries.append((info.st_mtime, name))
                    elif now - info.st_mtime > _STALE_TEMP_S:
                        stale.append(name)
        except OSError:
            return
        entries.sort()
        for name in [n for _, n in entries[: max(0, len(entries) - keep)]] + stale:
            try:
                os.unlink(name, dir_fd=self._fd)
            except OSError:
                pass

    def close(self) -> None:
        """Close the folder; a later call opens it again."""
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._secret, self._tried = None, b"", False

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass  # at interpreter exit os may be gone

    def _tag(self, key: str, payload: bytes) -> bytes:
        # The area and the name are authenticated with the payload: a valid
        # entry copied to another name, or into the other area, is a miss.
        message = os.fsencode(self.folder.name) + b"\0" + key.encode() + b"\0" + payload
        return hmac.new(self._secret, message, sha256).hexdigest().encode()

    def _open(self) -> bool:
        if self._tried:
            return self._fd is not None
        self._tried = True
        if not supported():
            return False
        fd = _open_area(self.folder)
        if fd is None:
            return False
        secret = load_secret()
        if secret is None:
            os.close(fd)
            return False
        self._fd, self._secret = fd, secret
        return True

    def _replace(self, temp: str, key: str) -> None:
        try:
            os.replace(temp, key, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as error:
            if error.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise
            # A folder holds the entry's name: an empty one is removed, a
            # full one moved aside (the cache never deletes what it did not
            # write), so that the entry heals.
            try:
                os.rmdir(key, dir_fd=self._fd)
            except OSError:
                os.rename(key, f".{key}.{secrets.token_hex(4)}.moved-aside", src_dir_fd=self._fd,
                          dst_dir_fd=self._fd)
            os.replace(temp, key, src_dir_fd=self._fd, dst_dir_fd=self._fd)


def _open_area(folder: Path) -> int | None:
    """Open the cache root and the area in it, creating them 0700; None (and a warning) if not trusted."""
    root = _open_folder(folder.parent, folder.parent, None)
    if root is None:
        return None
    try:
        return _open_folder(folder, Path(folder.name), root)
    finally:
        os.close(root)


def _open_folder(shown: Path, path: Path, parent: int | None) -> int | None:
    try:
        try:
            fd = os.open(path, _FOLDER, dir_fd=parent)
        except FileNotFoundError:
            if parent is None:
                os.makedirs(path, mode=0o700, exist_ok=True)
            else:
                try:
                    os.mkdir(path, 0o700, dir_fd=parent)
                except FileExistsError:
                    pass  # another run made it meanwhile
            fd = os.open(path, _FOLDER, dir_fd=parent)
    except OSError:
        try:
            link = stat.S_ISLNK(os.stat(path, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            _warn(shown, "the cache folder is a symbolic link",
                  f"remove the link, the next run makes a folder there: rm {shown}")
        return None  # not a folder, not creatable, unreadable: uncached, as a full disk would leave it
    try:
        # Group or others may read it (entries are not secret), never write it.
        if not _untrusted(os.fstat(fd), shown, "cache folder", 0o022, "-R go-w",
                          "set PATCHER_CACHE_DIR to a folder of your own"):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _untrusted(info: os.stat_result, shown: Path, what: str, mask: int, fix: str, elsewhere: str) -> bool:
    """Note why a folder or file that others could have written or read is not trusted; False if it is."""
    me = _me()
    if info.st_uid != me:
        _warn(shown, f"the {what} is owned by uid {info.st_uid}, not by you (uid {me})", elsewhere)
        return True
    if info.st_mode & mask:
        opened = "written" if mask & 0o022 == mask else "read"
        _warn(shown, f"the {what} can be {opened} by group or others (mode {stat.S_IMODE(info.st_mode):04o})",
              f"chmod {fix} {shown}")
        return True
    return False


def load_secret() -> bytes | None:
    """Return this user's cache key, creating it on first use at the default place; None (and a warning) if unfit.

    The key file must be a regular file (not a link) owned by this user and
    readable by nobody else, holding at least 32 characters. Without one,
    entries cannot be told from forgeries, so the cache is off.
    """
    path, explicit = key_file()
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        if explicit:
            _warn(path, "PATCHER_CACHE_KEY_FILE names no file",
                  "point it at your key file, or unset it to use a key of this machine's own")
            return None
        return _create_secret(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            _warn(path, "the cache key file is a symbolic link",
                  "set PATCHER_CACHE_KEY_FILE to the file it points to")
        else:
            _warn(path, f"the cache key file cannot be read ({error.strerror})",
                  "make it readable by you, or set PATCHER_CACHE_KEY_FILE to another one")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _warn(path, "the cache key file is not a regular file", f"replace it by one: rm {path}")
            return None
        if _untrusted(info, path, "cache key file", 0o077, "600",
                      "set PATCHER_CACHE_KEY_FILE to a key file of your own"):
            return None
        secret = _read_at_most(fd, _KEY_MAX + 1).strip()
    except OSError as error:
        _warn(path, f"the cache key file cannot be read ({error.strerror})",
              "make it readable by you, or set PATCHER_CACHE_KEY_FILE to another one")
        return None
    finally:
        os.close(fd)
    if not KEY_MIN <= len(secret) <= _KEY_MAX:
        _warn(path, f"the cache key must hold {KEY_MIN} to {_KEY_MAX} characters, it holds {len(secret)}",
              f"write a new one: python3 -c 'import secrets; print(secrets.token_hex(32))' > {path}")
        return None
    return secret


def _create_secret(path: Path) -> bytes | None:
    """Write a new random key at ``path`` (0600, in a 0700 folder), or read the one another run wrote first."""
    secret = secrets.token_hex(32).encode()
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        fd = os.open(temp, _CREATE, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(secret + b"\n")
        try:
            os.link(temp, path)  # never replaces a key another run made meanwhile
        except FileExistsError:
            return load_secret()
    except OSError as error:
        _warn(path, f"the cache key file cannot be created ({error.strerror})",
              "make its folder writable, or set PATCHER_CACHE_KEY_FILE to a key file of yours")
        return None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
    return secret


def _read_at_most(fd: int, limit: int) -> bytes:
    parts = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
