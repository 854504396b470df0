"""Map every way a command can end to one stderr line and one exit code."""

from __future__ import annotations

import errno
import functools
import sys
import traceback
from typing import Any, Callable, TypeVar

import click

from ..cache_store import take_warnings
from ..errors import PatcherError
from ..interrupt import raise_on_signals
from ..report import ExitCode

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(command: F) -> F:
    """Run a command body: bad input and exhausted resources exit 2, Ctrl-C 130, bugs 3; no traceback without --verbose."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        verbose = bool(kwargs.get("verbose"))
        restore = raise_on_signals()  # SIGTERM too gets Ctrl-C's clean-up path: temporaries are removed
        take_warnings()  # noted before this command began (an in-process caller's): not this run's
        try:
            return command(*args, **kwargs)
        except PatcherError as error:
            if verbose:
                traceback.print_exc()
            if error.command:
                error.name_input(_given(error.command, kwargs))
            fail(str(error), error.exit_code)
        except KeyboardInterrupt:
            fail("interrupted; nothing was written", ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            raise  # the reader of the output stopped: no bug, and cli.LazyGroup ends quietly
        except Exception as error:  # resources running out, else a bug
            if verbose:
                traceback.print_exc()
            exhausted = resource_message(error)
            if exhausted is not None:  # the machine, or an input too big for it: not a bug
                fail(exhausted, ExitCode.BAD_INPUT)
            fail(  # a bug: say so, and how to report it
                f"internal error: {type(error).__name__}: {error} "
                "(a bug in patcher; rerun with --verbose for the traceback and report it)",
                ExitCode.INTERNAL,
            )
        finally:
            restore()
            for line in take_warnings():  # why the cache was off: a folder others can write, an unfit key
                click.echo(f"warning: {line}", err=True)

    return wrapper  # type: ignore[return-value]


_TAKES_SET = frozenset({"apply", "diff", "verify-numerics"})


def _given(command: str, params: dict[str, Any]) -> list[str]:
    """The input and patch options this run was given, as arguments of the patcher COMMAND a hint names."""
    inputs = params.get("inputs") or ()
    source = params.get("source") or params.get("path") or params.get("vendor") or (inputs[0] if inputs else None)
    arguments = [str(source) if source is not None else "VENDOR"]
    if params.get("stage") is not None:  # as patch_arguments orders them: --target, --patches, --set
        arguments += ["--target", str(params["stage"])]
    if params.get("patches_dir") is not None:
        arguments += ["--patches", str(params["patches_dir"])]
    if command in _TAKES_SET:
        arguments += [a for o in params.get("overrides") or () for a in ("--set", o)]
    return arguments


def fail(message: str, code: int) -> None:
    """Print ``error: MESSAGE`` on stderr and exit with ``code``, whether or not anything still reads stderr."""
    from . import reached

    # A closed stderr ('2>&1 | head -1' stopped reading) makes the echo raise
    # BrokenPipeError, which ends the run quietly with the code reached: this one.
    reached(code)
    click.echo(f"error: {message}", err=True)
    sys.exit(int(code))


_FILES = {errno.EMFILE, errno.ENFILE}
_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def resource_message(error: BaseException) -> str | None:
    """Say what ran out when ERROR (or what caused it) is memory, recursion depth, open files or disk space; else None.

    Libraries wrap what runs out (GitPython turns EMFILE into an
    ImportError), so the causes are followed too.
    """
    where = _command()
    for cause in _causes(error):
        if isinstance(cause, MemoryError):
            return (f"{where}: out of memory (the input may be too large or hostile; "
                    "give the process more memory, or check the input, and run again)")
        if isinstance(cause, RecursionError):
            return (f"{where}: the input nests too deeply to process (maximum recursion depth exceeded; "
                    "--verbose shows where: simplify that input)")
        if isinstance(cause, OSError) and cause.errno in _FILES:
            return (f"{where}: too many open files{_open_files_limit()} "
                    "(raise the limit, e.g. 'ulimit -n 4096', and run again)")
        if isinstance(cause, OSError) and cause.errno in _SPACE:
            full = cause.filename or where
            return f"{full}: no space left on the device (free some space there and run again)"
    return None


def _causes(error: BaseException) -> list[BaseException]:
    """ERROR, then what raised it, and so on (a handful deep: chains can loop)."""
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(found) < 8 and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _command() -> str:
    context = click.get_current_context(silent=True)
    return context.command_path if context is not None else "patcher"


def _open_files_limit() -> str:
    try:
        import resource
    except ImportError:  # not on Windows
        return ""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return "" if soft == resource.RLIM_INFINITY else f", the limit being {soft}"
