"""Check that every stale copy of a shipped file is byte-identical to it: ``patcher verify-sync``.

Groups are found as ``apply`` finds them (the copy the image ships for
each patch target, plus the same-named file at the context root), plus
the groups declared in ``patcher.toml``::

    # patcher.toml, beside the Dockerfile (or given with --config)
    [[verify-sync.mirrors]]
    shipped = "qwen3_6_scripts/sequence.py"   # the copy the image ships
    copies = ["sequence.py", "old/sequence.py"]  # must stay byte-identical to it

Other top-level tables of ``patcher.toml`` belong to other commands and
are left alone.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the image-side tool may run on 3.10
    import tomli as tomllib

from ..archive.limits import open_regular
from ..archive.tree import SourceTree
from ..depth import data_nesting_problem
from ..errors import BadArchive, PatcherError
from ..patchset.model import SeriesOutline
from ..report import ExitCode
from ..shipping import ShipPlan, find_mirrors, line_endings_only, plan_shipping
from ..shipping.install_script import Note
from ..shipping.plan import describe
from .textdiff import FileChange, file_diff, line_count

CONFIG = "patcher.toml"
MAX_CONFIG = 1 << 20  # a few lines in practice; TOML is parsed whole, in memory
SECTION = "verify-sync"
SECTION_KEYS = frozenset({"mirrors"})
GROUP_KEYS = frozenset({"shipped", "copies"})


class ConfigError(PatcherError):
    """``patcher.toml`` is malformed or names files that are not in the tree."""


@dataclass(frozen=True)
class DeclaredGroup:
    """A mirror group from configuration."""

    shipped: str
    copies: tuple[str, ...]


@dataclass(frozen=True)
class CopyState:
    """One copy of a group compared with the shipped copy."""

    path: str
    lines: int
    endings: str  # "LF", "CRLF", "mixed", "none"
    state: str  # "identical", "drifted", "line endings only"


@dataclass(frozen=True)
class GroupCheck:
    """A shipped file, where the image puts it, and how each copy compares with it."""

    shipped: str
    lines: int
    endings: str
    image_paths: tuple[str, ...]
    origin: str  # "patch set" or the configuration file
    copies: tuple[CopyState, ...]
    diffs: tuple[bytes, ...]  # per copy, the diff turning it into the shipped file (b"" unless drifted)
    unread: tuple[Note, ...] = ()  # commands the reader did not read that could change what the image holds

    @property
    def drifted(self) -> tuple[CopyState, ...]:
        """The copies that are not byte-identical to the shipped file."""
        return tuple(c for c in self.copies if c.state != "identical")

    def line(self) -> str:
        """One line a reader can act on."""
        ships = (f"the image ships {self.shipped} -> {', '.join(self.image_paths)}" if self.image_paths
                 else f"the image does not ship {self.shipped}")
        if self.unread:
            verb = "was not read: it could" if len(self.unread) == 1 else "were not read: they could"
            ships += f", but {describe(self.unread)} {verb} change that"
        if not self.drifted:
            names = ", ".join(c.path for c in self.copies)
            return f"{names} == {self.shipped} ({_plural(self.lines, 'line')}); {ships}"
        only_endings = all(c.state == "line endings only" for c in self.drifted)
        if only_endings:
            left = ", ".join(f"{c.path} ({_plural(c.lines, 'line')}, {c.endings})" for c in self.drifted)
            right = f"{self.shipped} ({_plural(self.lines, 'line')}, {self.endings})"
            return f"{left} != {right} in line endings only; {ships}"
        left = ", ".join(f"{c.path} ({_plural(c.lines, 'line')}{_note(c)})" for c in self.drifted)
        return f"{left} != {self.shipped} ({_plural(self.lines, 'line')}); {ships}"


@dataclass(frozen=True)
class ApplyOutlook:
    """What ``patcher apply`` would do on the same input, for the hint: write (and re-sync which copies), or why not."""

    command: str  # the command line, on the very input: "patcher apply drops/x.zip"
    writes: bool
    synced: frozenset[str] = frozenset()  # the stale copies apply makes identical to their shipped file
    why: str = ""  # when it would not write: what it would say, and where to look


@dataclass(frozen=True)
class SyncReport:
    """Every mirror group of a tree and whether it is in sync."""

    label: str
    groups: tuple[GroupCheck, ...]
    config: str | None  # the configuration file read, if any

    @property
    def drifted(self) -> tuple[GroupCheck, ...]:
        """The groups with at least one copy out of sync."""
        return tuple(g for g in self.groups if g.drifted)

    @property
    def exit_code(self) -> ExitCode:
        """1 when any copy drifted (line endings included), else 0."""
        return ExitCode.DIFFERENCE if self.drifted else ExitCode.OK

    def summary(self, apply: ApplyOutlook | None = None) -> str:
        """The closing line, for stderr; ``apply`` is what apply would do on this input, for the hint."""
        if not self.groups:
            return "no mirror groups: no shipped file has a stale copy in this tree"
        uncertain = sum(1 for g in self.groups if g.unread)
        caveat = (f"; which file the image holds for {_plural(uncertain, 'group')} depends on lines the reader "
                  "did not read (see 'patcher inspect')") if uncertain else ""
        if not self.drifted:
            return ("the mirror group is in sync" if len(self.groups) == 1
                    else f"all {len(self.groups)} mirror groups in sync") + caveat
        return (f"{len(self.drifted)} of {_plural(len(self.groups), 'mirror group')} drifted: "
                f"{self._remedy(apply)}") + caveat

    def _remedy(self, apply: ApplyOutlook | None) -> str:
        """Name apply only where it would re-sync, on this very input; else say why it would not."""
        by_hand = "copy the shipped file over each stale copy"
        if apply is None:
            return by_hand
        if not apply.writes:
            return f"'{apply.command}' would write nothing ({apply.why}); {by_hand}"
        stale = [c.path for g in self.drifted for c in g.drifted]
        ours = [path for path in stale if path in apply.synced]
        if not ours:
            return by_hand  # copies only patcher.toml declares: apply does not touch them
        if len(ours) < len(stale):
            return f"'{apply.command}' re-syncs {len(ours)} of them; {by_hand.replace('each', 'each other')}"
        return f"'{apply.command}' re-syncs them, or {by_hand}"

    def to_json(self, diffs: bool = False) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "input": self.label,
            "config": self.config,
            "in_sync": not self.drifted,
            "groups": [
                {
                    "shipped": g.shipped,
                    "lines": g.lines,
                    "line_endings": g.endings,
                    "image_paths": list(g.image_paths),
                    "origin": g.origin,
                    "in_sync": not g.drifted,
                    "unread": [{"file": n.file, "line": n.line, "text": n.text, "kind": n.kind, "reason": n.reason}
                               for n in g.unread],
                    "copies": [
                        {"path": c.path, "lines": c.lines, "line_endings": c.endings, "state": c.state,
                         **({"diff": _text(g, c)} if diffs else {})}
                        for c in g.copies
                    ],
                }
                for g in self.groups
            ],
        }


def check_sync(tree: SourceTree, patch_set: SeriesOutline, declared: tuple[DeclaredGroup, ...] = (),
               config: str | None = None, stage: str | None = None) -> SyncReport:
    """Compare every copy of every mirror group with the shipped copy (``stage``: the build stage that is the image)."""
    plan = plan_shipping(tree, stage)
    groups: dict[str, tuple[str, dict[str, None]]] = {}
    for target in patch_set.targets:
        shipped = plan.shipped_copy(target)
        group = find_mirrors(tree, shipped)
        if group.mirrors:
            groups.setdefault(shipped, ("patch set", {}))[1].update(dict.fromkeys(group.mirrors))
    for item in declared:
        origin, copies = groups.setdefault(item.shipped, (config or CONFIG, {}))
        copies.update(dict.fromkeys(c for c in item.copies if c != item.shipped))
    checks = tuple(_check(tree, plan, shipped, origin, tuple(copies)) for shipped, (origin, copies) in groups.items())
    return SyncReport(tree.label, checks, config)


def load_config(tree: SourceTree, path: Path | None) -> tuple[tuple[DeclaredGroup, ...], str | None]:
    """The groups ``patcher.toml`` declares: ``path`` when given, else the one beside the Dockerfile."""
    if path is not None:
        try:  # a regular file only: a fifo or /dev/zero would block or never end
            with open_regular(path, str(path), MAX_CONFIG) as stream:
                text = stream.read()
        except BadArchive as error:
            raise ConfigError(error.message, where=str(path), hint="pass the patcher.toml file itself") from None
        where = str(path)
    elif tree.exists(CONFIG):
        text, where = tree.read(CONFIG), CONFIG
        if len(text) > MAX_CONFIG:
            raise ConfigError(f"is {len(text)} bytes, more than the {MAX_CONFIG} a configuration may be", where=where)
    else:
        return (), None
    try:
        decoded = text.decode("utf-8")
        deep = data_nesting_problem(decoded, toml=True)  # before tomllib, which recurses per level
        if deep is not None:
            raise ConfigError(f"cannot be read: {deep}", where=where)
        data = tomllib.loads(decoded)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"not valid TOML: {error}", where=where) from None
    groups = tuple(_groups(data.get(SECTION, {}), where))
    for group in groups:
        for name in (group.shipped, *group.copies):
            if not tree.exists(name):
                raise ConfigError(f"[{SECTION}] names '{name}', which is not a file of {tree.label}", where=where,
                                  hint="paths are relative to the folder holding the Dockerfile")
    return groups, where


def _groups(section: Any, where: str) -> list[DeclaredGroup]:
    if not isinstance(section, Mapping):
        raise ConfigError(f"'{SECTION}' must be a table", where=where)
    _check_keys(section, SECTION_KEYS, where, f"{SECTION}.")
    entries = section.get("mirrors", [])
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise ConfigError(f"'{SECTION}.mirrors' must be an array of tables ([[{SECTION}.mirrors]])", where=where)
    groups = []
    for number, entry in enumerate(entries, 1):
        label = f"{SECTION}.mirrors[{number}]"
        _check_keys(entry, GROUP_KEYS, where, label + ".")
        shipped, copies = entry.get("shipped"), entry.get("copies")
        if not isinstance(shipped, str) or not shipped:
            raise ConfigError(f"'{label}.shipped' must name the copy the image ships", where=where)
        if not isinstance(copies, list) or not copies or not all(isinstance(c, str) and c for c in copies):
            raise ConfigError(f"'{label}.copies' must be a non-empty list of paths", where=where)
        groups.append(DeclaredGroup(shipped.strip("/"), tuple(c.strip("/") for c in copies)))
    return groups


def _check_keys(data: Mapping[str, Any], known: frozenset[str], where: str, prefix: str) -> None:
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else f" (known: {', '.join(sorted(known))})"
            raise ConfigError(f"unknown key '{prefix}{key}'{hint}", where=where)


def _check(tree: SourceTree, plan: ShipPlan, shipped: str, origin: str, copies: tuple[str, ...]) -> GroupCheck:
    reference = tree.read(shipped)
    states, diffs = [], []
    for path in copies:
        data = tree.read(path)
        if data == reference:
            state = "identical"
        elif line_endings_only(data, reference):
            state = "line endings only"
        else:
            state = "drifted"
        states.append(CopyState(path, line_count(data), endings(data), state))
        # a/ is the stale copy, b/ the shipped file: the diff says how to bring the copy in line.
        diffs.append(file_diff(FileChange(shipped, data, reference), old_path=path) if state == "drifted" else b"")
    image_paths = _image_paths(plan, shipped)
    return GroupCheck(shipped, line_count(reference), endings(reference), image_paths, origin,
                      tuple(states), tuple(diffs), plan.caveats(shipped, image_paths))


def copy_diff(group: GroupCheck, copy: CopyState) -> bytes:
    """The unified diff turning a drifted copy into the shipped file (a/ is the copy, b/ the shipped)."""
    return group.diffs[group.copies.index(copy)]


def _text(group: GroupCheck, copy: CopyState) -> str | None:
    data = copy_diff(group, copy)
    return data.decode("utf-8", "replace") if data else None


def _image_paths(plan: ShipPlan, path: str) -> tuple[str, ...]:
    # Where it is used: the install scripts' destinations, else where COPY puts it.
    installed = tuple(dict.fromkeys(i.image_path for i in plan.installed if i.path == path))
    if installed:
        return installed
    return (plan.copied[path],) if path in plan.copied else ()


def endings(data: bytes) -> str:
    """The line endings of ``data``: "LF", "CRLF", "mixed" or "none"."""
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    if crlf and lf:
        return "mixed"
    return "CRLF" if crlf else "LF" if lf else "none"


def _note(copy: CopyState) -> str:
    return "; line endings only" if copy.state == "line endings only" else ""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"
