"""Map every way a command can end to one stderr line and one exit code."""

from __future__ import annotations

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
    """Run a command body: expected failures exit 2, Ctrl-C 130, bugs 3; never a traceback unless --verbose."""

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
            fail(str(error), error.exit_code)
        except KeyboardInterrupt:
            fail("interrupted; nothing was written", ExitCode.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            raise  # the reader of the output stopped: no bug, and cli.LazyGroup ends quietly
        except Exception as error:  # a bug: say so, and how to report it
            if verbose:
                traceback.print_exc()
            fail(
                f"internal error: {type(error).__name__}: {error} "
                "(a bug in patcher; rerun with --verbose for the traceback and report it)",
                ExitCode.INTERNAL,
            )
        finally:
            restore()
            for line in take_warnings():  # why the cache was off: a folder others can write, an unfit key
                click.echo(f"warning: {line}", err=True)

    return wrapper  # type: ignore[return-value]


def fail(message: str, code: int) -> None:
    """Print ``error: MESSAGE`` on stderr and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    sys.exit(int(code))
