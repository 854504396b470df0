"""Run the series' patches on one source file; every outcome is a value, never an exit."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

import libcst as cst

from ..transforms.base import ConfigError, StepFailed
from ..transforms.pattern import contains
from ..transforms.scope import ScopeNotFound, find_scope
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


def patch_source(path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome:
    """Apply ``patches`` in order to ``source``, keeping every byte they do not change."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return FileOutcome(path, source, source, (), f"line {error.raw_line}: {error.message}")
    outcomes = []
    for patch in patches:
        module, outcome = run_patch(patch, module)
        outcomes.append(outcome)
    return FileOutcome(path, source, module.bytes, tuple(outcomes))


def run_patch(patch: Patch, module: cst.Module) -> tuple[cst.Module, PatchOutcome]:
    """Apply one patch: already applied, applied, or failed with the reason."""
    try:
        applied = [_holds(module, marker.scope, marker.pattern) for marker in patch.applied_when]
    except ScopeNotFound as error:
        return module, PatchOutcome(patch, Status.FAILED, f"{error} (scope {patch.scope})")
    if applied and all(applied):
        return module, PatchOutcome(patch, Status.ALREADY_APPLIED)
    result = module
    for number, step in enumerate(patch.steps, 1):
        scope_name = step.scope or patch.scope
        try:
            result = step.apply(result, scope_name)
        except (StepFailed, ScopeNotFound, ConfigError) as error:
            # The first marker is the patch's main sign: if it holds while the
            # patch cannot apply, the file has the patch with other parameters.
            partly = (" (the file already has this patch with other parameters, or edited by hand)"
                      if applied and applied[0] else "")
            return module, PatchOutcome(
                patch, Status.FAILED, f"step {number} ({step.name}): {error} in {scope_name}{partly}"
            )
    # A patch that cannot recognise its own result would apply twice.
    if patch.applied_when and not all(_holds(result, m.scope, m.pattern) for m in patch.applied_when):
        return module, PatchOutcome(
            patch, Status.FAILED, "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
        )
    return result, PatchOutcome(patch, Status.APPLIED)


def _holds(module: cst.Module, scope: str, pattern: object) -> bool:
    return contains(pattern, find_scope(module, scope))  # type: ignore[arg-type]
