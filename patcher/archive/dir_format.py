"""Write entries as a folder with normalised modes and times."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from patcher.archive.layout import CHUNK, DIR_MODE, Entry, Progress, fsync_dir

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def write_dir(root: Path, entries: list[Entry], mtime: int, progress: Progress | None = None) -> str:
    """Create ROOT holding ENTRIES; return the sha256 of its listing.

    The listing has one line per file, sorted by path:
    '<mode in octal> <sha256 of content> <path>\\n'. Folders are implied.
    """
    os.mkdir(root)
    listing = hashlib.sha256()
    folders = [root]
    for entry in entries:
        target = root / entry.name
        if entry.file is None:
            os.mkdir(target)
            folders.append(target)
            continue
        digest = hashlib.sha256()
        reader = entry.file.reader(progress)
        try:
            # Created private, then chmod'ed: the umask must not decide modes.
            fd = os.open(target, _FLAGS, 0o600)
            with os.fdopen(fd, "wb") as out:
                for block in iter(lambda: reader.read(CHUNK), b""):
                    digest.update(block)
                    out.write(block)
                reader.finish()
                out.flush()
                os.fsync(out.fileno())
                os.fchmod(out.fileno(), entry.mode)
        finally:
            reader.close()
        os.utime(target, (mtime, mtime))
        listing.update(f"{entry.mode:04o} {digest.hexdigest()} {entry.name}\n".encode())
    # Deepest first: setting a folder's time must come after its contents
    # stop changing it.
    for folder in reversed(folders):
        os.chmod(folder, DIR_MODE)
        os.utime(folder, (mtime, mtime))
        fsync_dir(folder)
    return listing.hexdigest()
