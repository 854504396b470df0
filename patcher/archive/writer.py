"""Write the patched build context deterministically and atomically.

The output is first written beside its destination under a hidden,
unique name (so concurrent runs never share one), synced to disk, then
renamed into place. Until that rename the destination is untouched;
after any failure, Ctrl-C included, the temporary is removed and so are
the parent folders this call created. The temporary is registered with
``patcher.interrupt`` from before it exists, so an interrupt that cannot
wait for that clean-up removes it too. A run killed outright (SIGKILL, a
power cut) removes nothing: the next run writing to that folder removes
what it left (``remove_leftovers``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from patcher.archive.dir_format import write_dir
from patcher.archive.layout import (
    CHUNK,
    DEFAULT_MTIME,
    Entry,
    OutputFile,
    OutputFormat,
    fsync_dir,
    plan,
    resolve_mtime,
)
from patcher.archive.tar_format import GZIP_LEVEL, write_tar
from patcher.archive.zip_format import write_zip
from patcher.errors import OutputError
from patcher.interrupt import temporary, test_hook

__all__ = ["DEFAULT_MTIME", "GZIP_LEVEL", "OutputFile", "OutputFormat", "remove_leftovers", "temporary_name",
           "write_output"]

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


def write_output(
    dest: Path,
    files: Iterable[OutputFile],
    *,
    fmt: OutputFormat,
    zip_prefix: str = "",
    mtime: int | None = None,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Write FILES to DEST in format FMT atomically; return its sha256.

    For an archive the digest is of its bytes. For a folder it is the
    sha256 of a listing with one line per file, sorted by path:
    '<mode in octal> <content sha256> <path>\\n'.

    ZIP_PREFIX (a folder ending in '/') goes before every path of a zip,
    so the zip keeps the vendor's own top folder. Other formats do not
    use it: a tar keeps the Dockerfile at its root for
    'docker build - < ctx.tar.gz'. MTIME defaults to SOURCE_DATE_EPOCH,
    else 1980-01-01. Raise OutputError if DEST exists and FORCE is not
    set, or if it cannot be written; BadArchive if a source fails.

    PROGRESS, if given, is called as content is copied with the bytes
    done so far and the total, both counting file contents only.
    """
    stamp = resolve_mtime(mtime)
    dest = Path(os.path.abspath(dest))
    if os.path.lexists(dest) and not force:
        raise _exists(dest)
    # Collected before touching the disk: a failing iterator then leaves
    # nothing behind, and its own errors are not taken for write errors.
    entries = plan(files, zip_prefix if fmt is OutputFormat.ZIP else "")
    advance = _counter(entries, progress) if progress is not None else None
    advance = _announce_write(advance)
    created = _make_parents(dest.parent)
    remove_leftovers(dest.parent)
    temp = temporary_name(dest, "tmp")
    # Registered before it exists: an interrupt that cannot wait for the
    # clean-up below (see patcher.interrupt) still removes it, and the
    # folders made for it if they are still empty.
    with contextlib.ExitStack() as held:
        for folder in created:
            held.enter_context(temporary(folder, folder_if_empty=True))
        held.enter_context(temporary(temp))
        try:
            if fmt is OutputFormat.DIRECTORY:
                digest = write_dir(temp, entries, stamp, advance)
            else:
                _write_archive(temp, entries, stamp, fmt, advance)
                digest = _sha256_file(temp)
            _move_into_place(temp, dest, force)
            fsync_dir(dest.parent)  # makes the rename itself durable
        except BaseException as exc:
            if not _is_taken(exc, temp):
                _remove(temp)
            for folder in reversed(created):
                _rmdir_quietly(folder)
            if isinstance(exc, OSError):
                raise _output_error(exc, dest) from exc
            raise
    return digest


# Test hook, unset outside the test suite: with PATCHER_TEST_WRITE_STARTED
# naming a file (or a pipe, '/dev/fd/N'), once the first content bytes are
# in the temporary the writer appends "write started" to it, then waits up
# to a minute (see patcher.interrupt.test_hook). A test can so signal a
# write known to be in progress instead of racing one with a sleep.
TEST_WRITE_STARTED = "PATCHER_TEST_WRITE_STARTED"


def _announce_write(advance: Callable[[int], None] | None) -> Callable[[int], None] | None:
    if not os.environ.get(TEST_WRITE_STARTED):
        return advance
    started = False

    def announce(count: int) -> None:
        nonlocal started
        if advance is not None:
            advance(count)
        if not started:
            started = True
            test_hook(TEST_WRITE_STARTED, "write")

    return announce


def _counter(entries: list[Entry], progress: Callable[[int, int], None]) -> Callable[[int], None]:
    total = sum(entry.file.length for entry in entries if entry.file is not None)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        progress(done, total)

    progress(0, total)
    return advance


def _write_archive(
    temp: Path, entries: list[Entry], stamp: int, fmt: OutputFormat, progress: Callable[[int], None] | None
) -> None:
    # O_EXCL: a name that somehow exists is someone else's, never ours to
    # truncate. 0o666 lets the umask decide the archive's own mode, as for
    # any file the user creates.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    with os.fdopen(fd, "wb") as out:
        if fmt is OutputFormat.ZIP:
            write_zip(out, entries, stamp, progress)
        else:
            write_tar(out, entries, stamp, gz=fmt is OutputFormat.TAR_GZ, progress=progress)
        out.flush()
        os.fsync(out.fileno())


def _move_into_place(temp: Path, dest: Path, force: bool) -> None:
    if not os.path.lexists(dest):
        os.rename(temp, dest)
        return
    if not force:
        # Created by someone else while we were writing.
        raise _exists(dest)
    if not temp.is_dir() and not _is_real_dir(dest):
        os.replace(temp, dest)  # atomic: readers see the old file or the new
        return
    # A folder cannot be replaced in one step: move the old one aside, move
    # the new one in (putting the old back if that fails), delete the old.
    aside = temporary_name(dest, "old")
    os.rename(dest, aside)
    try:
        os.rename(temp, dest)
    except BaseException:
        os.rename(aside, dest)
        raise
    # The new output is in place; failing to delete the old copy now must
    # not report the write as failed.
    with temporary(aside):
        _remove(aside)


def _is_taken(exc: BaseException, temp: Path) -> bool:
    """Return whether creating TEMP failed because it exists: then it is someone else's to keep."""
    # Creating sets only 'filename'; a rename failing sets 'filename2' as well.
    return (
        isinstance(exc, FileExistsError)
        and exc.filename is not None
        and exc.filename2 is None
        and Path(exc.filename) == temp
    )


def temporary_name(dest: Path, kind: str) -> Path:
    """Return a hidden name next to DEST that no other run will pick (LEFTOVER matches it)."""
    # The pid separates processes, the random part threads of one process.
    return dest.parent / f".{dest.name}.{os.getpid()}.{secrets.token_hex(8)}.{kind}"


# What temporary_name names, and nothing else: '.NAME.PID.16 hex digits.tmp' (the
# output being written) or '.old' (a folder output moved aside for --force).
LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{16}\.(?:tmp|old)", re.DOTALL)
LEFTOVER_AGE = 60.0  # seconds without a change after which an owner-less temporary is a leftover


def remove_leftovers(folder: Path, now: float | None = None) -> list[Path]:
    """Remove what killed runs left in FOLDER (their temporaries); return what was removed.

    Only names LEFTOVER matches, only regular files and real folders (a
    link is never followed, nor removed), only when the process the name
    holds is gone and nothing in it changed for LEFTOVER_AGE seconds: a
    concurrent run's temporary, fresh or still written, is left alone.
    A SIGKILL leaves temporaries no clean-up in the killed process can
    remove; the next run that writes beside them does.
    """
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        found = LEFTOVER.fullmatch(entry.name)
        if found is None or entry.is_symlink() or _running(int(found.group("pid"))):
            continue
        path = Path(entry.path)
        newest = _newest_change(path)
        if newest is None or now - newest <= LEFTOVER_AGE:
            continue
        _remove(path)
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """Whether a process PID runs here (another user's counts): its temporary may still be written."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    # A killed process no one has reaped yet (a container's first process
    # may never reap) still answers: its state says it is gone.
    try:
        with open(f"/proc/{pid}/stat", "rb") as status:
            state = status.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def _newest_change(path: Path) -> float | None:
    """The latest mtime of PATH and, for a real folder, of everything under it (links not followed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return info.st_mtime
    if not stat.S_ISDIR(info.st_mode):
        return None  # a link, a socket, a device: never a temporary of ours
    newest = info.st_mtime
    for root, folders, files in os.walk(path, followlinks=False):
        for name in folders + files:
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
            except OSError:
                continue
    return newest


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _make_parents(folder: Path) -> list[Path]:
    """Create FOLDER and missing ancestors; return those created, outermost first."""
    missing: list[Path] = []
    probe = folder
    while not os.path.lexists(probe):
        missing.append(probe)
        probe = probe.parent
    created: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                continue  # made meanwhile by a concurrent run: not ours to remove
            created.append(path)
        if not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    except OSError as exc:
        for path in reversed(created):
            _rmdir_quietly(path)
        raise _output_error(exc, folder) from exc
    return created


def _output_error(exc: OSError, dest: Path) -> OutputError:
    if exc.errno in _DISK_FULL:
        return OutputError(
            f"disk full while writing {dest.name}", where=str(dest), hint="free space and retry"
        )
    if exc.errno in _DENIED:
        return OutputError(
            f"cannot write to {dest.parent}: permission denied",
            where=str(dest),
            hint="choose another output path or fix the folder's permissions",
        )
    if exc.errno == errno.ENOTDIR:
        return OutputError(
            "a parent of the output is a file, not a folder",
            where=str(dest),
            hint="choose another output path",
        )
    return OutputError(f"cannot write: {exc.strerror or exc}", where=str(dest))


def _exists(dest: Path) -> OutputError:
    return OutputError("exists; pass --force to overwrite", where=str(dest))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fp:
        for block in iter(lambda: fp.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _remove(path: Path) -> None:
    try:
        if _is_real_dir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _rmdir_quietly(folder: Path) -> None:
    try:
        os.rmdir(folder)  # only if still empty: never delete others' files
    except OSError:
        pass
