"""Stop any command within a second of Ctrl-C or SIGTERM, leaving none of its temporary outputs behind.

Python runs a signal handler only between two bytecodes of the main
thread. While native code holds the interpreter lock (libcst's parser
holds it for seconds on a large file, ``ast.parse`` for one on 2 MB, a
PyTorch kernel as long as it runs), the handler waits, and so does the
user. So the ``patcher`` program runs each command in a forked child and
the first process only watches it (``run_supervised``):

- the watcher passes an interrupt on to the child (a terminal's Ctrl-C
  reaches both: it is not passed twice), and the child ends as it always
  did: ``KeyboardInterrupt`` unwinds, the writer removes its temporary,
  ``cli.errors`` prints one line, exit 130;
- a child that has not ended ``GRACE`` seconds after the signal is
  killed; the watcher then removes the temporary outputs the child had
  registered, prints the one line itself (unless the child already had)
  and exits 130. Processes the child started and left behind are killed
  too (Linux: the watcher is their subreaper).

Writers register each temporary output with ``temporary(path)`` before
creating it; the child tells the watcher through a pipe. A second
interrupt while the first is being handled ends the process at once, after
removing the registered temporaries, in the child or (unsupervised, as
under ``CliRunner``) in the one process. Where ``fork`` or
``sigtimedwait`` is missing, or ``PATCHER_NO_SUPERVISOR=1`` (profiling),
commands run unsupervised, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn

GRACE = 0.4  # seconds a child has to end by itself after an interrupt (then the watcher ends it)
MESSAGE = "error: interrupted; nothing was written\n"
EXIT_INTERRUPTED = 130
NO_SUPERVISOR = "PATCHER_NO_SUPERVISOR"
_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_SI_KERNEL = 0x80  # si_code of a signal the kernel sends, a terminal's Ctrl-C to its foreground group among them
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

# What this process holds, oldest first: path -> True for a folder it made,
# removed only while still empty (a concurrent run may have put its output there).
_temporaries: dict[str, bool] = {}
_channel: int | None = None  # write end of the pipe to the watcher, in a supervised child
_interrupted = False  # a first interrupt is being handled


# --------------------------------------------------------------------------- temporaries


@contextlib.contextmanager
def temporary(path: Path, *, folder_if_empty: bool = False) -> Iterator[None]:
    """Hold ``path`` as a temporary output for the block: removed by an interrupt that cannot wait for the block.

    Register before the path exists: a name registered but never created
    costs nothing, a temporary created but not yet registered would be
    left behind. The block removes it or moves it into place itself.
    ``folder_if_empty``: a folder made for the output, removed only if empty.
    """
    name = os.path.abspath(path)
    _temporaries[name] = folder_if_empty
    _tell(b"hold-empty " if folder_if_empty else b"hold ", name)
    try:
        yield
    finally:
        _temporaries.pop(name, None)
        _tell(b"drop ", name)


def remove_temporaries(held: dict[str, bool]) -> None:
    """Remove what ``held`` names, newest first: files, folders with what is in them, made folders if empty.

    A link is removed, never followed.
    """
    for name, folder_if_empty in reversed(list(held.items())):
        with contextlib.suppress(OSError):
            if folder_if_empty:
                os.rmdir(name)
            elif os.path.isdir(name) and not os.path.islink(name):
                import shutil

                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)


def _tell(kind: bytes, name: str | None = None) -> None:
    if _channel is None:
        return
    line = kind + (os.fsencode(name).hex().encode() if name is not None else b"") + b"\n"
    with contextlib.suppress(OSError):  # a watcher that is gone has nothing left to learn
        os.write(_channel, line)


# --------------------------------------------------------------------------- in the process that runs the command


def raise_on_signals() -> Callable[[], None]:
    """Turn SIGINT and SIGTERM into KeyboardInterrupt while a command runs; return what puts the old handlers back.

    A second signal while the first is handled ends the process at once
    (see ``_end_now``). Outside the main thread nothing is installed.
    """
    global _interrupted
    try:
        previous = [(number, signal.signal(number, _raise_first)) for number in _active()]
    except ValueError:  # not the main thread: signals are the main thread's to handle
        return lambda: None
    _interrupted = False

    def restore() -> None:
        for number, handler in previous:
            signal.signal(number, handler)

    return restore


def _active() -> list[signal.Signals]:
    """SIGINT and SIGTERM, unless ignored: a shell starts background jobs with SIGINT ignored, and it stays so."""
    return [number for number in _SIGNALS if signal.getsignal(number) is not signal.SIG_IGN]


def _raise_first(signum: int, frame: object) -> None:
    global _interrupted
    if _interrupted:
        _end_now()
    _interrupted = True
    raise KeyboardInterrupt


def _end_now(signum: int = 0, frame: object = None) -> NoReturn:
    """Remove the registered temporaries, print the one line, and exit 130 without unwinding."""
    remove_temporaries(dict(_temporaries))
    with contextlib.suppress(OSError):
        os.write(2, MESSAGE.encode())
    _tell(b"said")
    os._exit(EXIT_INTERRUPTED)


# --------------------------------------------------------------------------- the watcher


def run_supervised(main: Callable[[], object]) -> None:
    """Run ``main`` (a command line's entry) in a child process this one watches; exit as the child did."""
    if not _can_supervise():
        main()
        return
    libc = _libc()
    if libc is not None:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    reader, writer = os.pipe()
    watched = {*_active(), signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    parent = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(reader)
        _run_child(main, writer, parent, libc)
    os.close(writer)
    _watch(child, reader, watched)  # the signals stay blocked here: the watcher takes them one by one


def _can_supervise() -> bool:
    if os.environ.get(NO_SUPERVISOR, "").strip() not in ("", "0"):
        return False
    return hasattr(os, "fork") and hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None


def _run_child(main: Callable[[], object], writer: int, parent: int, libc: Any) -> NoReturn:
    global _channel
    _channel = writer
    if libc is not None:
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the watcher died before that took hold
            os._exit(EXIT_INTERRUPTED)
    # Until a command takes over (cli.errors), an interrupt has nothing to unwind.
    for number in _active():
        signal.signal(number, _end_now)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*_SIGNALS, signal.SIGCHLD})
    code: Any = 0
    try:
        main()
    except SystemExit as done:
        code = done.code
    except KeyboardInterrupt:
        _end_now()
    # Everything the command prints is out: a kill from here on must not repeat its line.
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    _tell(b"said")
    _exit_done(code)


def _exit_done(code: Any) -> NoReturn:
    """End the finished child with the status ``sys.exit(code)`` gives, without tearing the interpreter down.

    The watcher, and whoever waits for it, waits for this exit: tearing down
    every module and collecting what they hold costs tens of milliseconds
    and releases nothing the kernel does not. The atexit handlers still run
    (weakref finalizers, a coverage tool's save); worker threads left idle
    end with the process.
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:  # sys.exit("message"): the message on stderr, status 1
        with contextlib.suppress(Exception):
            print(code, file=sys.stderr)
        status = 1
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def _watch(child: int, reader: int, watched: set[signal.Signals]) -> NoReturn:
    """Wait for the child, passing interrupts on; kill it if it does not end in time; leave nothing behind."""
    os.set_blocking(reader, False)
    held: dict[str, bool] = {}
    said = False
    pending = b""
    deadline: float | None = None
    status: int | None = None
    killed = False
    while status is None:
        wait = 0.25 if deadline is None else max(0.0, deadline - time.monotonic())
        info = signal.sigtimedwait(watched, wait)
        pending, said = _read(reader, pending, held, said)
        finished, status = os.waitpid(child, os.WNOHANG)
        if finished:
            break
        status = None
        if info is not None and info.si_signo in _SIGNALS:
            if deadline is None:
                deadline = time.monotonic() + GRACE
                if info.si_code != _SI_KERNEL:  # a terminal signals its whole foreground group, the child too
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, info.si_signo)
            else:
                deadline = time.monotonic()  # asked twice: now
        if deadline is not None and time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
            _, status = os.waitpid(child, 0)
            killed = True
    pending, said = _read(reader, pending, held, said)
    remove_temporaries(held)
    if killed or deadline is not None and os.WIFSIGNALED(status):
        _end_orphans()
        if not said:
            with contextlib.suppress(OSError):
                os.write(2, MESSAGE.encode())
        os._exit(EXIT_INTERRUPTED)
    if os.WIFSIGNALED(status):  # a crash, or a kill from outside: end as the child did, by its signal
        _end_orphans()
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's action cannot be set, and needs not be
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal whose default is to go on
    os._exit(os.waitstatus_to_exitcode(status))


def _read(reader: int, pending: bytes, held: dict[str, bool], said: bool) -> tuple[bytes, bool]:
    """Take in what the child told: temporaries held and dropped, and that it printed its last line."""
    while True:
        try:
            chunk = os.read(reader, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in lines:
        kind, _, name = line.partition(b" ")
        path = os.fsdecode(bytes.fromhex(name.decode())) if name else ""
        if kind == b"said":
            said = True
        elif kind in (b"hold", b"hold-empty"):
            held[path] = kind == b"hold-empty"
        elif kind == b"drop":
            held.pop(path, None)
    return pending, said


def _end_orphans() -> None:
    """Kill and reap what the killed child left running (its forked rule checker): reparented to us, the subreaper."""
    me = str(os.getpid())
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[1].decode() == me:
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
                os.waitpid(int(entry), 0)


# --------------------------------------------------------------------------- test hooks


HOLD = "PATCHER_TEST_HOLD"


def test_hook(variable: str, what: str) -> None:
    """Tell a test that ``what`` started, through the file (or '/dev/fd/N' pipe) the environment names; then wait.

    Unset outside the test suite. A test can so send its signal to a run
    known to be at that point instead of racing one with a sleep. The wait
    is a minute, which a signal ends. With ``PATCHER_TEST_HOLD`` also set,
    SIGINT and SIGTERM are blocked instead, for good, as native code holding
    the interpreter lock keeps them waiting (libcst's parser on a large
    file): the process cannot react, and only the watcher can end it.
    """
    marker = os.environ.get(variable)
    if not marker:
        return
    hold = bool(os.environ.get(HOLD))
    if hold:  # blocked before the test hears of it: a signal it sends next finds the process holding
        signal.pthread_sigmask(signal.SIG_BLOCK, set(_SIGNALS))
    with open(marker, "ab") as announce:
        announce.write(f"{what} started\n".encode())
    while hold:
        time.sleep(3600)
    time.sleep(60)
