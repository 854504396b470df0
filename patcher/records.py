"""What a run records about its patches as plain data: fingerprints of matches, and where a pattern came closest.

The transforms compute these (``transforms.fingerprint``,
``transforms.closest``); the patch cache, the manifest and the reports
store and read them back. They live here, apart from the transforms, so
that reading them back imports no libcst: a run whose results all come
from the cache never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class Print:
    """The normalised form of some code: its hash and its text."""

    sha256: str
    text: str


@dataclass(frozen=True)
class MatchPrint:
    """One match of a step: the code it matched and each named binding."""

    code: Print
    bindings: Mapping[str, Print]

    def to_json(self) -> dict[str, Any]:
        """Give plain data, texts included (for the cache and for ``upgrade``)."""
        return {"code": [self.code.sha256, self.code.text],
                "bindings": {name: [p.sha256, p.text] for name, p in sorted(self.bindings.items())}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "MatchPrint":
        """Read back what ``to_json`` wrote."""
        return cls(Print(*data["code"]), {name: Print(*value) for name, value in data["bindings"].items()})


@dataclass(frozen=True)
class StepPrint:
    """Every match of one step of a patch, in the order the step found them."""

    step: int
    matches: tuple[MatchPrint, ...]

    def to_json(self) -> dict[str, Any]:
        """Give plain data."""
        return {"step": self.step, "matches": [m.to_json() for m in self.matches]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "StepPrint":
        """Read back what ``to_json`` wrote."""
        return cls(int(data["step"]), tuple(MatchPrint.from_json(m) for m in data["matches"]))


@dataclass(frozen=True)
class Closest:
    """The run of code that came closest to a pattern, and where they part."""

    first_line: int
    last_line: int
    statement: int  # 1-based index of the first pattern statement that differs
    pattern: str  # that pattern statement, one line
    code: str  # the code statement in its place, one line ("" when the block ended first)
    matched: int  # how many leading pattern statements matched
    differing_tokens: int
    inside: str = ""  # where inside that (compound) statement they part, e.g. "else, statement 2"

    def describe(self) -> str:
        """Return ``closest: lines A-B, statement N differs: pattern '...', code '...'``."""
        lines = f"line {self.first_line}" if self.first_line == self.last_line else \
            f"lines {self.first_line}-{self.last_line}"
        where = f" ({self.inside})" if self.inside else ""
        if not self.pattern:
            return f"closest: {lines}, statement {self.statement} differs{where}: the code goes on with '{self.code}'"
        code = f"code '{self.code}'" if self.code else "the block ends there"
        return f"closest: {lines}, statement {self.statement} differs{where}: pattern '{self.pattern}', {code}"

    def to_json(self) -> dict[str, Any]:
        """Give the same as plain data."""
        return {"first_line": self.first_line, "last_line": self.last_line, "statement": self.statement,
                "inside": self.inside, "pattern": self.pattern, "code": self.code, "matched": self.matched,
                "differing_tokens": self.differing_tokens}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Closest":
        """Read back what ``to_json`` wrote."""
        return cls(**data)


@dataclass(frozen=True)
class Diagnostic:
    """Why a patch found no match, as data: which check, where, and the closest code."""

    kind: str  # "step", "requires" or "scope"
    scope: str
    pattern: str = ""
    step: int | None = None
    closest: Closest | None = None
    scopes: tuple[str, ...] = ()  # existing scopes with names close to a missing one

    def describe(self) -> str:
        """Say, for the error line, where the code came closest."""
        if self.closest is not None:
            return self.closest.describe()
        if self.kind == "scope":
            return f"scopes with close names: {', '.join(self.scopes)}" if self.scopes else \
                "no class or function has a close name"
        return "nothing in the scope resembles it"

    def to_json(self) -> dict[str, Any]:
        """Give the same as plain data."""
        return {"kind": self.kind, "scope": self.scope, "pattern": self.pattern, "step": self.step,
                "closest": None if self.closest is None else self.closest.to_json(),
                "scopes": list(self.scopes), "text": self.describe()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Diagnostic":
        """Read back what ``to_json`` wrote."""
        closest = data.get("closest")
        return cls(data["kind"], data["scope"], data.get("pattern", ""), data.get("step"),
                   None if closest is None else Closest.from_json(closest), tuple(data.get("scopes", ())))
