"""Replay the series one patch at a time: what each patch alone does on top of the ones before it."""

from __future__ import annotations

from dataclasses import dataclass

from ..patchset.model import Patch
from ..patchset.cache import patch_source  # imports the runner, and libcst, only when called
from ..patchset.outcome import Status
from ..pipeline import Build


@dataclass(frozen=True)
class PatchStep:
    """One patch of the series and the shipped file before and after it."""

    patch: Patch
    status: Status
    path: str  # the shipped context path it edits
    before: bytes
    after: bytes

    @property
    def changed(self) -> bool:
        """Whether this patch changed any byte."""
        return self.before != self.after


def replay(build: Build) -> tuple[PatchStep, ...]:
    """Each patch's own step, in series order; the last step of a file ends where ``build`` did.

    Every step reruns the runner on the series up to that patch, so it is
    exactly what ``apply`` computes for that prefix of the series.
    """
    steps: dict[str, PatchStep] = {}
    finished = {outcome.path: outcome for outcome in build.files}
    for target, path in build.targets.items():
        patches = build.patch_set.for_target(target)
        original = build.tree.read(path)
        previous = original
        for count, patch in enumerate(patches, 1):
            # The whole series on this file is what the build already ran.
            outcome = finished[path] if count == len(patches) else patch_source(path, original, patches[:count])
            status = outcome.outcomes[-1].status if len(outcome.outcomes) == count else Status.FAILED
            steps[patch.id] = PatchStep(patch, status, path, previous, outcome.patched)
            previous = outcome.patched
    return tuple(steps[p.id] for p in build.patch_set.patches if p.id in steps)
