"""``cli.errors.handle_errors``: every way a command body can end, as one stderr line and one exit code.

An expected failure (``PatcherError``) is ``error: WHERE: WHAT (HINT)`` and its
exit code; Ctrl-C (or SIGTERM) is 130 and "interrupted; nothing was
written"; a bug is 3 and "internal error: TYPE: TEXT (...)"; a command's own
exit, click's usage errors and a reader that went away pass through as they
are. A traceback shows only with ``--verbose``. The cache's warnings of this
run follow, one ``warning:`` line each, whatever the ending.
"""

from __future__ import annotations

import json
import signal
import threading
from typing import Callable

import click
import pytest
from click.testing import CliRunner, Result

from patcher import cache_store
from patcher.cli.errors import fail, handle_errors, resource_message
from patcher.errors import PatcherError


class Deeper(PatcherError):
    """An expected failure of another kind, with an exit code of its own."""

    exit_code = 7


def run(body: Callable[[], object], *args: str) -> Result:
    """Run BODY as a command wrapped by handle_errors, with ``--verbose`` available."""

    @click.command()
    @click.option("--verbose", is_flag=True)
    @handle_errors
    def command(verbose: bool) -> object:
        return body()

    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def raising(error: BaseException) -> Callable[[], object]:
    def body() -> object:
        raise error

    return body


def test_an_expected_failure_is_one_line_with_where_what_and_hint_and_its_exit_code() -> None:
    result = run(raising(PatcherError("no such patch set folder", where="patches", hint="pass --patches DIR")))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "error: patches: no such patch set folder (pass --patches DIR)\n")
    other = run(raising(Deeper("refused")))
    assert (other.exit_code, other.stderr) == (7, "error: refused\n")


def test_verbose_adds_the_traceback_before_the_line() -> None:
    result = run(raising(PatcherError("bad input", where="x.zip")), "--verbose")
    assert result.exit_code == 2
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert result.stderr.endswith("patcher.errors.PatcherError: x.zip: bad input\nerror: x.zip: bad input\n")
    bug = run(raising(KeyError("k")), "--verbose")
    assert bug.exit_code == 3 and bug.stderr.startswith("Traceback (most recent call last):\n")
    assert bug.stderr.endswith("KeyError: 'k'\nerror: internal error: KeyError: 'k' (a bug in patcher; rerun with "
                               "--verbose for the traceback and report it)\n")


def test_a_bug_is_exit_3_and_one_line_naming_it() -> None:
    result = run(raising(ZeroDivisionError("division by zero")))
    assert (result.exit_code, result.stdout, result.stderr) == (
        3, "", "error: internal error: ZeroDivisionError: division by zero (a bug in patcher; rerun with --verbose "
               "for the traceback and report it)\n")


def test_an_interrupt_is_exit_130_and_says_nothing_was_written() -> None:
    result = run(raising(KeyboardInterrupt()))
    assert (result.exit_code, result.stdout, result.stderr) == (130, "", "error: interrupted; nothing was written\n")


@pytest.mark.parametrize("error, code, said", [
    (SystemExit(1), 1, ""),
    (click.exceptions.Exit(0), 0, ""),
    (click.UsageError("--a and --b cannot be combined"), 2, "Error: --a and --b cannot be combined\n"),
])
def test_a_commands_own_exit_and_usage_errors_pass_through(error: BaseException, code: int, said: str) -> None:
    result = run(raising(error))
    assert result.exit_code == code and result.stderr.endswith(said) and "internal error" not in result.stderr


def test_a_gone_reader_is_no_bug_and_is_passed_on() -> None:
    # Passed on to click, which ends a standalone run on a broken pipe with exit 1 and says nothing
    # (patcher's own group ends it with the verdict reached: test_closed_stdout).
    result = run(raising(BrokenPipeError(32, "Broken pipe")))
    assert (result.exit_code, result.stderr) == (1, "")


def test_the_runs_cache_warnings_follow_its_ending_and_earlier_ones_are_dropped() -> None:
    cache_store._warn(cache_store.Path("/elsewhere"), "noted by an earlier caller", "ignore it")

    def warns() -> None:
        cache_store._warn(cache_store.Path("/cache/patched"), "the cache folder is a symbolic link", "rm it")
        raise PatcherError("bad input", where="x.zip")

    result = run(warns)
    assert (result.exit_code, result.stderr) == (2, (
        "error: x.zip: bad input\n"
        "warning: /cache/patched: the cache folder is a symbolic link; the cache is off for this run (rm it)\n"))
    assert cache_store.take_warnings() == ()

    def done() -> str:
        cache_store._warn(cache_store.Path("/cache/checks"), "the cache key file is a symbolic link", "fix it")
        click.echo("output")
        return "value"

    ok = run(done)
    assert (ok.exit_code, ok.stdout) == (0, "output\n")
    assert ok.stderr == ("warning: /cache/checks: the cache key file is a symbolic link; the cache is off for this "
                         "run (fix it)\n")


def test_signals_raise_keyboard_interrupt_only_while_the_command_runs() -> None:
    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def body() -> None:
        seen.append(signal.getsignal(signal.SIGTERM))
        signal.raise_signal(signal.SIGTERM)

    result = run(body)
    assert (result.exit_code, result.stderr) == (130, "error: interrupted; nothing was written\n")
    assert seen and seen[0] is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_fail_prints_the_line_and_exits_with_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        fail("x.zip: not a zip file", 2)
    assert done.value.code == 2
    assert capsys.readouterr() == ("", "error: x.zip: not a zip file\n")


def _raised_while_handling(first: BaseException, then: BaseException) -> Callable[[], object]:
    def body() -> object:
        try:
            raise first
        except type(first):
            raise then  # noqa: B904: implicitly chained, as a library's clean-up raising would be
    return body


def test_an_input_nested_too_deeply_is_exit_2_with_one_line_saying_how_to_find_and_fix_it() -> None:
    # A hostile input (JSON nested two hundred thousand deep, as a manifest could be) exhausts the stack:
    # not a bug of patcher's, so exit 2 and the line that says what to do, word for word.
    result = run(lambda: json.loads("[" * 200_000 + "]" * 200_000))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "error: command: the input nests too deeply to process (maximum recursion depth exceeded; "
               "--verbose shows where: simplify that input)\n")


@pytest.mark.parametrize("first", [MemoryError(), OSError(24, "Too many open files")])
def test_what_ran_out_is_found_behind_an_error_raised_while_handling_it(first: BaseException) -> None:
    # A library's clean-up that fails in turn (its own error chained by __context__) is still what ran out.
    result = run(_raised_while_handling(first, RuntimeError("could not close the stream")))
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: command: ") and ("out of memory" in result.stderr
                                                              or "too many open files" in result.stderr)
    assert result.stderr.count("\n") == 1


def _chain(depth: int, root: BaseException) -> Callable[[], object]:
    """A body raising an error DEPTH deep in a chain of 'raise ... from' whose deepest cause is ROOT."""
    def body() -> object:
        error: BaseException = root
        for level in range(depth - 1):
            wrapper = RuntimeError(f"wrapped {level}")
            wrapper.__cause__ = error
            error = wrapper
        raise error
    return body


def test_what_ran_out_is_looked_for_eight_errors_deep_and_no_deeper() -> None:
    # Chains can loop or run long: the causes are followed a bounded handful deep (eight), so a
    # cause further down is not looked for and the run is reported as the bug it then is.
    assert run(_chain(8, MemoryError())).exit_code == 2
    deeper = run(_chain(9, MemoryError()))
    assert deeper.exit_code == 3 and "internal error: RuntimeError: wrapped 7" in deeper.stderr


@pytest.mark.parametrize("soft, said", [(256, "too many open files, the limit being 256 (raise"),
                                        (None, "too many open files (raise")])
def test_the_open_files_limit_is_named_unless_there_is_none(monkeypatch: pytest.MonkeyPatch, soft: int | None,
                                                              said: str) -> None:
    resource = pytest.importorskip("resource")  # POSIX: where Windows has no such limit, none is named
    limit = resource.RLIM_INFINITY if soft is None else soft
    monkeypatch.setattr(resource, "getrlimit", lambda which: (limit, resource.RLIM_INFINITY))
    result = run(raising(OSError(24, "Too many open files")))
    assert result.exit_code == 2 and said in result.stderr, result.stderr


def test_what_ran_out_outside_a_command_is_said_of_patcher() -> None:
    # An in-process caller that runs out before a command's context exists (or after it closed) still gets the
    # one line, named for the program. click's contexts are per thread: a new thread has none, whatever ran before.
    said: list[object] = []

    def outside() -> None:
        said.extend([click.get_current_context(silent=True), resource_message(MemoryError()),
                     resource_message(ValueError("no"))])

    thread = threading.Thread(target=outside)
    thread.start()
    thread.join()
    assert said == [None, "patcher: out of memory (the input may be too large or hostile; give the process more "
                          "memory, or check the input, and run again)", None]
