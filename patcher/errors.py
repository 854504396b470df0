"""Expected failures: each carries where it happened, what, and what to do next."""

from __future__ import annotations


class PatcherError(Exception):
    """An expected failure the user can act on; exit code 2 unless stated."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

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
