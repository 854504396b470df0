"""Expected failures: each carries where it happened, what, and what to do next."""

from __future__ import annotations

import shlex
from typing import Sequence


class PatcherError(Exception):
    """An expected failure the user can act on; exit code 2 unless stated."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None,
                 command: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        # A hint that runs a patcher COMMAND on the input says {command}; only the CLI knows
        # the input as given, and names it (name_input); until then it reads VENDOR.
        self.command = command
        self.hint_template = hint
        self.hint = hint.format(command=f"'patcher {command} VENDOR'") if hint and command else hint

    def name_input(self, arguments: Sequence[str]) -> None:
        """Put the input and options as given (ARGUMENTS, shell-quoted here) into a hint that runs a command on it."""
        if self.hint_template and self.command:
            line = " ".join(["patcher", self.command, *(shlex.quote(a) for a in arguments)])
            self.hint = self.hint_template.format(command=f"'{line}'")

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        text = f"{text} ({self.hint})" if self.hint else text
        # One error, one line: a newline inside an OS message or a member
        # name must not split what the CLI prints.
        return " ".join(text.splitlines())


class BadArchive(PatcherError):
    """The input archive is unsafe, corrupt or not a vendor tree."""


class OutputError(PatcherError):
    """The output cannot be written: it exists, is unwritable, or the disk is full."""


class PatchSetError(PatcherError):
    """The patch set itself is invalid: a bad key, parameter, pattern or template."""


class ShippingError(PatcherError):
    """The Dockerfile or install script does not say which file the image ships."""


class SourceError(PatcherError):
    """A target source file cannot be parsed or patched."""
