"""What a patch is once loaded: frozen values, no behaviour beyond describing themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:  # annotations only: the outline of a series is read without libcst
    from ..transforms.base import Operation
    from ..transforms.pattern import Pattern

PARAM_TYPES: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool}
# How a str parameter is written into code: a string literal (the default),
# or, when the parameter says so, a checked identifier or expression.
STR_KINDS = ("literal", "identifier", "expression")


@dataclass(frozen=True)
class Param:
    """A typed, documented knob of a patch, with its default.

    ``minimum`` and ``maximum`` bound an int or float's value and a str's
    length in characters. ``kind`` says how a str reaches the code (see
    ``STR_KINDS``); ``allow_nonfinite`` lets a float be nan or infinite.
    """

    name: str
    type: str
    default: Any
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    kind: str = "literal"
    allow_nonfinite: bool = False


@dataclass(frozen=True)
class Example:
    """A before/after pair that documents a patch and generates its tests.

    Without ``after`` and ``error`` the patch must report "already applied"
    and leave ``before`` unchanged; with ``error`` it must fail with a message
    containing that text.
    """

    name: str
    before: str
    after: str | None = None
    error: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AppliedMarker:
    """Code looked for in a scope: the patch's applied form, or what it requires."""

    pattern: Pattern
    scope: str


Built = tuple[tuple["Operation", ...], tuple[AppliedMarker, ...], tuple[AppliedMarker, ...]]


@dataclass(frozen=True)
class PatchCode:
    """A patch's steps and markers, built from its configuration when first asked for.

    Building renders the patch's code through Jinja2 and parses it with
    libcst. A run whose every result comes from the patch cache needs
    neither: ``digest`` (of the patch's table, its parameter values and
    the templates folder) is what the cache keys on, and two loads of the
    same patch compare equal by it.
    """

    digest: str
    build: Callable[[], Built] = field(compare=False, repr=False)

    @cached_property
    def built(self) -> Built:
        """The steps, the applied-when markers and the requires markers (raises PatchSetError)."""
        return self.build()


@dataclass(frozen=True)
class Patch:
    """One patch of the series, rendered with its parameter values."""

    id: str
    path: Path
    description: str
    origin: str
    last_update: str
    target: str
    scope: str
    params: tuple[Param, ...]
    values: Mapping[str, Any]
    code: PatchCode
    examples: tuple[Example, ...]

    @property
    def steps(self) -> tuple[Operation, ...]:
        """The patch's steps, in order."""
        return self.code.built[0]

    @property
    def applied_when(self) -> tuple[AppliedMarker, ...]:
        """The code whose presence says the patch is already applied."""
        return self.code.built[1]

    @property
    def requires(self) -> tuple[AppliedMarker, ...]:
        """Code the patch relies on but does not match in a step."""
        return self.code.built[2]

    @property
    def summary(self) -> str:
        """The description's first line."""
        return self.description.strip().splitlines()[0] if self.description.strip() else self.id

    def header(self) -> str:
        """Render the DEP-3 style header used in commit messages and reports."""
        # One blank line after the summary, as git and DEP-3 have it, however
        # many the description leaves there.
        body = "\n".join(self.description.strip().splitlines()[1:]).strip()
        text = f"{self.summary}\n\n{body}" if body else self.summary
        return text + f"\n\nPatch: {self.id}\nOrigin: {self.origin}\nLast-Update: {self.last_update}\n"


@dataclass(frozen=True)
class PatchSet:
    """The series of patches to apply, in order, and where it came from."""

    directory: Path
    patches: tuple[Patch, ...]
    commit: str | None = None  # git commit of the patch set, when it lives in a repository
    commit_reason: str | None = None  # why commit is None (vcs.read_commit): outside git, or what failed

    def for_target(self, target: str) -> tuple[Patch, ...]:
        """The patches of one target file, in series order."""
        return tuple(p for p in self.patches if p.target == target)

    @property
    def targets(self) -> tuple[str, ...]:
        """Each target file once, in series order."""
        return tuple(dict.fromkeys(p.target for p in self.patches))


@dataclass(frozen=True)
class SeriesOutline:
    """Which file each patch of the series targets, read without rendering or parsing any pattern."""

    directory: Path
    patches: tuple[tuple[str, str], ...]  # (patch id, target), in series order

    def ids_for(self, target: str) -> tuple[str, ...]:
        """The ids of the patches of one target file, in series order."""
        return tuple(patch_id for patch_id, patch_target in self.patches if patch_target == target)

    @property
    def targets(self) -> tuple[str, ...]:
        """Each target file once, in series order."""
        return tuple(dict.fromkeys(target for _, target in self.patches))
