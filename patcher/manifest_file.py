"""Name the file in which ``apply`` records its run, and read that record back from a context it wrote.

A leaf: the pipeline writes the manifest (``manifest.py`` renders it),
``patcher check`` reads its ``allowed_rules`` back, ``apply`` run again on
its own output carries the record forward, and ``upgrade`` can compare the
fingerprints it holds; none of them should have to import the others (nor
Jinja2, nor libcst) to agree on where it is and what it says.

The manifest comes with the input, so it is read as a record, never as
evidence: it is decoded strictly (a field of the wrong type makes the whole
record unreadable, not half-read), and nothing in it allows a rule or
changes what is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from .records import MatchPrint, Print, StepPrint

if TYPE_CHECKING:
    from .archive.tree import SourceTree

MANIFEST = "patcher-manifest.json"
# What apply writes is a few kilobytes per patch; anything far larger is not its manifest.
MAX_SIZE = 16 << 20


@dataclass(frozen=True)
class RecordedPatch:
    """One patch as an earlier run recorded it: where, how it ended, with what, and what each step matched."""

    id: str
    file: str
    status: str  # "applied", "already applied" or "failed"
    params: Mapping[str, Any]
    steps: tuple[StepPrint, ...]  # fingerprints only: each Print's text is ""


@dataclass(frozen=True)
class RecordedMirror:
    """One stale copy as an earlier run recorded it."""

    path: str
    shipped: str
    differed: bool


@dataclass(frozen=True)
class Record:
    """What the manifest of a context ``apply`` wrote says about the run that wrote it."""

    input_name: str
    input_sha256: str | None  # None for a folder
    origin_name: str  # the vendor drop the patches were first applied to
    origin_sha256: str | None
    series: tuple[str, ...]
    patches: tuple[RecordedPatch, ...]
    mirrors: tuple[RecordedMirror, ...]
    changed: Mapping[str, str]  # context path -> sha256 of the bytes the run wrote
    allowed: tuple[tuple[str, str], ...]
    stage: str | None = None  # the build stage that was the image ('--target'); None: the last

    def patch(self, patch_id: str, file: str) -> RecordedPatch | None:
        """Return the record of PATCH_ID on FILE, if the run recorded one."""
        return next((p for p in self.patches if p.id == patch_id and p.file == file), None)


class RecordError(ValueError):
    """The manifest in a tree is not one ``apply`` wrote: unreadable, or a field is missing or of the wrong type."""


def read_record(tree: "SourceTree") -> Record | None:
    """Return the record in TREE's manifest, or None when it has none; raise RecordError when it is unreadable."""
    if not tree.exists(MANIFEST):
        return None
    size = next((f.size for f in tree.files() if f.path == MANIFEST), 0)
    if size > MAX_SIZE:
        raise RecordError(f"it holds {size} bytes, more than a manifest apply writes ({MAX_SIZE})")
    from .depth import data_nesting_problem

    try:
        text = tree.read(MANIFEST).decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError("it is not JSON (UnicodeDecodeError)") from None
    deep = data_nesting_problem(text)  # before json, which recurses once per level and names no line
    if deep is not None:
        raise RecordError(f"it {deep}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # a JSONDecodeError is a ValueError
        raise RecordError(f"it is not JSON ({type(exc).__name__})") from None
    return decode_record(data)


def decode_record(data: Any) -> Record:
    """Decode a manifest's JSON strictly; raise RecordError naming the first field out of shape."""
    top = _object(data, "the manifest")
    given = _object(top.get("input"), "input")
    origin = _object(top["origin"], "origin") if top.get("origin") is not None else given
    patches = tuple(_patch(p, f"patches[{n}]") for n, p in enumerate(_array(top.get("patches"), "patches")))
    mirrors = []
    for n, item in enumerate(_array(top.get("mirrors"), "mirrors")):
        mirror = _object(item, f"mirrors[{n}]")
        mirrors.append(RecordedMirror(_text(mirror.get("path"), f"mirrors[{n}].path"),
                                      _text(mirror.get("synced_to"), f"mirrors[{n}].synced_to"),
                                      _flag(mirror.get("differed_before"), f"mirrors[{n}].differed_before")))
    changed = {path: _digest(value, f"changed_files[{path!r}]")
               for path, value in _object(top.get("changed_files"), "changed_files").items()}
    allowed = []
    for n, item in enumerate(_array(top.get("allowed_rules", []), "allowed_rules")):
        entry = _object(item, f"allowed_rules[{n}]")
        allowed.append((_text(entry.get("rule"), f"allowed_rules[{n}].rule"),
                        _text(entry.get("reason"), f"allowed_rules[{n}].reason")))
    series = _array(_object(top.get("patch_set"), "patch_set").get("series"), "patch_set.series")
    return Record(
        input_name=_text(given.get("name"), "input.name"),
        input_sha256=_optional_digest(given.get("sha256"), "input.sha256"),
        origin_name=_text(origin.get("name"), "origin.name"),
        origin_sha256=_optional_digest(origin.get("sha256"), "origin.sha256"),
        series=tuple(_text(s, "patch_set.series") for s in series),
        patches=patches,
        mirrors=tuple(mirrors),
        changed=changed,
        allowed=tuple(allowed),
        # Older manifests have no "stage": their runs always took the last stage.
        stage=None if top.get("stage") is None else _text(top["stage"], "stage"),
    )


def _patch(data: Any, where: str) -> RecordedPatch:
    entry = _object(data, where)
    status = _text(entry.get("status"), f"{where}.status")
    if status not in ("applied", "already applied", "failed"):
        raise RecordError(f"{where}.status is {status!r}, not a status apply records")
    steps = []
    for n, step in enumerate(_array(entry.get("steps"), f"{where}.steps")):
        step = _object(step, f"{where}.steps[{n}]")
        number = step.get("step")
        if type(number) is not int:
            raise RecordError(f"{where}.steps[{n}].step is not a number")
        matches = []
        for m, match in enumerate(_array(step.get("matches"), f"{where}.steps[{n}].matches")):
            at = f"{where}.steps[{n}].matches[{m}]"
            match = _object(match, at)
            bindings = {name: Print(_digest(value, f"{at}.bindings.{name}"), "")
                        for name, value in _object(match.get("bindings"), f"{at}.bindings").items()}
            matches.append(MatchPrint(Print(_digest(match.get("code"), f"{at}.code"), ""), bindings))
        steps.append(StepPrint(number, tuple(matches)))
    return RecordedPatch(_text(entry.get("id"), f"{where}.id"), _text(entry.get("file"), f"{where}.file"), status,
                         _object(entry.get("params"), f"{where}.params"), tuple(steps))


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{where} is not an object")
    return value


def _array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where} is not a list")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where} is not a string")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{where} is not true or false")
    return value


def _digest(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) != 64 or value.strip("0123456789abcdef"):
        raise RecordError(f"{where} is not a sha256")
    return value


def _optional_digest(value: Any, where: str) -> str | None:
    return None if value is None else _digest(value, where)
