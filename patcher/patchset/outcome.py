"""What running the series on one file gave: plain values, read back from the cache without libcst."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Sequence

from ..records import Diagnostic, StepPrint
from .model import Patch


class Status(enum.Enum):
    """What happened to one patch on one file."""

    APPLIED = "applied"
    ALREADY_APPLIED = "already applied"
    FAILED = "failed"


@dataclass(frozen=True)
class PatchOutcome:
    """The result of one patch on one file; ``detail`` says why it failed."""

    patch: Patch
    status: Status
    detail: str = ""
    diagnostic: Diagnostic | None = None  # where the code came closest, when a pattern found nothing
    prints: tuple[StepPrint, ...] = ()  # per step, what it matched and captured (applied patches)

    @property
    def message(self) -> str:
        """Say the failure and, when known, the closest code, on one line."""
        if self.diagnostic is None:
            return self.detail
        return f"{self.detail}; {self.diagnostic.describe()}"

    def to_record(self) -> list[Any]:
        """Give plain data that ``from_record`` reads back (the patch cache stores it)."""
        return [self.patch.id, self.status.value, self.detail,
                None if self.diagnostic is None else self.diagnostic.to_json(),
                [p.to_json() for p in self.prints]]

    @classmethod
    def from_record(cls, patch: Patch, record: Sequence[Any]) -> "PatchOutcome":
        """Rebuild the outcome ``to_record`` described; KeyError/IndexError/TypeError/ValueError if damaged."""
        diagnostic = None if record[3] is None else Diagnostic.from_json(record[3])
        return cls(patch, Status(record[1]), record[2], diagnostic,
                   tuple(StepPrint.from_json(p) for p in record[4]))


@dataclass(frozen=True)
class FileOutcome:
    """The result of the whole series on one file."""

    path: str
    original: bytes
    patched: bytes
    outcomes: tuple[PatchOutcome, ...]
    parse_error: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the file could not be parsed or any patch failed."""
        return self.parse_error is not None or any(o.status is Status.FAILED for o in self.outcomes)

    @property
    def changed(self) -> bool:
        """Whether the patched bytes differ from the original."""
        return self.patched != self.original
