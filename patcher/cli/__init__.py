"""The ``patcher`` command: a group whose subcommands load only when they run.

Heavy imports (libcst, GitPython, Jinja2) live in the subcommand modules,
so ``patcher --help`` costs little more than importing click.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, NoReturn

import click

from ..report import EXIT_CODES_HELP, ExitCode

# name -> "module:function"; each module holds one command.
COMMANDS = {
    "apply": "patcher.cli.apply:apply_command",
    "diff": "patcher.cli.diff:diff_command",
    "inspect": "patcher.cli.inspect:inspect_command",
    "verify-sync": "patcher.cli.verify_sync:verify_sync_command",
    "check": "patcher.cli.check:check_command",
    "verify-numerics": "patcher.cli.verify_numerics:verify_numerics_command",
    "upgrade": "patcher.cli.upgrade:upgrade_command",
    "test": "patcher.cli.test:test_command",
    "new": "patcher.cli.new:new_command",
    "explain": "patcher.cli.explain:explain_command",
}


# The exit code a command reached before printing its report: when the reader
# of stdout stops early (``patcher check X | head -1``) the verdict still holds.
_reached: list[int] = [ExitCode.OK]


def reached(code: int) -> None:
    """Record the exit code a command has reached, before it prints the report that explains it.

    A command whose stdout reader stops reading exits with this code, quietly
    (0 when nothing was recorded): a closed pipe is no failure of the
    command, but it must not turn a failing verdict into a passing one.
    """
    _reached[0] = int(code)


def _reader_stopped() -> NoReturn:
    """End quietly after a write to a closed stdout (or stderr): no message, no traceback.

    As Python's documentation recommends for SIGPIPE: point the standard
    streams at os.devnull, so the interpreter's last flush at exit does not
    fail again ("Exception ignored ... BrokenPipeError").
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (AttributeError, OSError, ValueError):  # not a real file (an in-process test runner)
            pass
    os.close(devnull)
    sys.exit(_reached[0])


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked or helped.

    It also ends a command whose output reader went away: ``patcher diff X |
    head -1`` exits as ``git log | head`` leaves the pipeline, without an
    error (see ``reached`` for the exit code).
    """

    def invoke(self, ctx: click.Context) -> Any:
        _reached[0] = ExitCode.OK
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # what is still buffered fails here, not at interpreter exit
            return result
        except BrokenPipeError:
            _reader_stopped()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name].split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help from a table, so listing commands imports none of them.
        rows = [(name, SUMMARIES.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


SUMMARIES = {
    "apply": "Patch a vendor zip and pack a deterministic Docker build context.",
    "diff": "Show what apply changes in a vendor zip, and which patch changes what.",
    "inspect": "Show what the Docker build ships, where it lands, and what the patches target.",
    "verify-sync": "Check that stale copies of shipped files match the copy the image ships.",
    "check": "Run the hardware safety rules on a vendor zip, a tree or one .py file.",
    "verify-numerics": "Compare vendor and patched paged_attn.py outputs on the CPU (needs PyTorch).",
    "upgrade": "Compare how the patches fare on an old and a new vendor drop, for review.",
    "test": "Run a patch set's examples and its safety rules' examples.",
    "new": "Start a new patch: write ID.toml from a template and add it to the series.",
    "explain": "Say what a patch does, and with --in where it matches in a vendor drop.",
}


@click.group(cls=LazyGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="patcher", message="%(prog)s %(version)s")
def main() -> None:
    """Apply declarative, reviewable patches to vendor inference-engine zips."""
