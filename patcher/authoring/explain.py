"""Explain a patch to a reviewer: its header, parameters and steps, and where it matches in a drop.

Matching uses the transforms' own search (``find_statements``) on the file
the image ships, as this patch receives it (after the patches before it in
the series), so what ``explain`` shows is what ``apply`` would rewrite. The
patch's status comes from running the series as ``apply`` does, so a patch
that does not fit names the closest code, at the shipped file's lines.
``to_json`` gives the same explanation as plain data.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ..checks.inputs import open_tree  # the one safe tar reader, shared with 'patcher check'
from ..patchset import Patch, PatchSet
from ..patchset.runner import PatchOutcome, Status, patch_source
from ..shipping import plan_shipping
from ..shipping.target_stage import image_stage
from ..transforms import Insert, Operation, Replace, ReuseBuffers
from ..records import Diagnostic
from ..transforms.pattern import Bindings, Pattern, decode_metavariables, find_statements, layout_key
from ..transforms.scope import ScopeNotFound, find_scope

@dataclass(frozen=True)
class ParamView:
    """One parameter: what it is, its default, and the value this run renders the patch with."""

    name: str
    type: str
    default: Any
    value: Any
    help: str
    bounds: str  # "min 1", "1..64" or ""


@dataclass(frozen=True)
class StepView:
    """One step in words, and the patterns it looks for (label, pattern)."""

    number: int
    op: str
    scope: str
    words: tuple[str, ...]  # the first line says what it does; the rest is code, indented by the renderer
    patterns: tuple[tuple[str, Pattern], ...]


@dataclass(frozen=True)
class Capture:
    """What one metavariable captured in a match, as source text."""

    name: str
    text: str


@dataclass(frozen=True)
class MatchView:
    """One place a step's pattern matched: its lines in the file and its captures."""

    step: int
    scope: str  # the step's scope
    what: str  # "pattern", "anchor", "m_blk = ..."
    lines: tuple[int | None, int | None]  # first and last line in the shipped file; None: an earlier patch wrote it
    captures: tuple[Capture, ...]


@dataclass(frozen=True)
class Location:
    """Where the patch lands in one drop, and what it would do there."""

    vendor: str
    shipped: str  # the context path of the file the image runs as the target
    scope: str
    scope_lines: tuple[int | None, int | None] | None  # None when the scope is not in the file
    earlier: tuple[str, ...]  # patches of the series that changed the file before this one
    status: str  # "applies", "already applied" or "fails"
    detail: str  # why it fails ("" otherwise)
    diagnostic: Diagnostic | None  # where the code came closest, when a pattern found nothing
    matches: tuple[MatchView, ...]
    unmatched: tuple[str, ...]  # "step 2: pattern" for each pattern found nowhere


@dataclass(frozen=True)
class Explanation:
    """Everything ``patcher explain`` shows about one patch."""

    patch: Patch
    params: tuple[ParamView, ...]
    steps: tuple[StepView, ...]
    location: Location | None = None


def explain_patch(patch: Patch) -> Explanation:
    """Describe ``patch``: its parameters with the values it was rendered with, and its steps."""
    params = tuple(
        ParamView(p.name, p.type, p.default, patch.values.get(p.name, p.default), p.help, _bounds(p.minimum, p.maximum))
        for p in patch.params
    )
    steps = tuple(_step_view(number, step, step.scope or patch.scope) for number, step in enumerate(patch.steps, 1))
    return Explanation(patch, params, steps)


def locate(explanation: Explanation, patch_set: PatchSet, vendor: Path, stage: str | None = None) -> Explanation:
    """Add where the patch matches in the drop at ``vendor`` (a zip, a folder or a build context tar).

    ``stage`` names the build stage that is the image (``--target``); without
    it, the one a context's manifest records, else the last.
    """
    with open_tree(vendor) as tree:
        shipped = plan_shipping(tree, image_stage(tree, stage)).shipped_copy(explanation.patch.target)
        data = tree.read(shipped)
    patch = explanation.patch
    earlier = list(patch_set.for_target(patch.target))[: _index(patch_set, patch)]
    # Run the series as apply does, once: the same verdict, the closest code at the shipped file's
    # lines, and the bytes this patch received from the patches before it.
    inputs: list[bytes] = []
    result = patch_source(shipped, data, [*earlier, patch], inputs=inputs)
    changed_by = tuple(o.patch.id for o in result.outcomes[:-1] if o.status is Status.APPLIED)
    received = inputs[-1] if inputs else data
    if result.parse_error is not None:
        location = Location(str(vendor), shipped, patch.scope, None, changed_by, "fails",
                            f"does not parse: {result.parse_error}", None, (), ())
    else:
        location = _locate_in(explanation, str(vendor), shipped, received, changed_by, _LineMap(received, data),
                              result.outcomes[-1])
    return Explanation(explanation.patch, explanation.params, explanation.steps, location)


class _LineMap:
    """Map a line of the file as this patch receives it to the same line of the shipped file."""

    def __init__(self, received: bytes, shipped: bytes):
        old, new = shipped.splitlines(), received.splitlines()
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        self._equal = [(j1, i1, j2 - j1) for tag, i1, _, j1, j2 in matcher.get_opcodes() if tag == "equal"]

    def __call__(self, line: int) -> int | None:
        """Return the shipped file's line number, or None if an earlier patch wrote this line."""
        for start, shipped_start, length in self._equal:
            if start < line <= start + length:
                return shipped_start + line - start
        return None


def _index(patch_set: PatchSet, patch: Patch) -> int:
    same = [p.id for p in patch_set.for_target(patch.target)]
    return same.index(patch.id)


def _locate_in(explanation: Explanation, vendor: str, shipped: str, data: bytes,
               earlier: tuple[str, ...], to_shipped: "_LineMap", outcome: PatchOutcome) -> Location:
    patch = explanation.patch
    status = {Status.APPLIED: "applies", Status.ALREADY_APPLIED: "already applied"}.get(outcome.status, "fails")
    detail = outcome.detail if outcome.status is Status.FAILED else ""
    module = cst.parse_module(data)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # keeps node identity for the lookups
    positions = wrapper.resolve(PositionProvider)
    try:
        scope_node = find_scope(module, patch.scope)
        scope_lines: tuple[int | None, int | None] | None = _lines(positions[scope_node], to_shipped)
    except ScopeNotFound:
        scope_lines = None
    matches: list[MatchView] = []
    unmatched: list[str] = []
    for step in explanation.steps:
        try:
            node = find_scope(module, step.scope)
        except ScopeNotFound as error:
            unmatched.append(f"step {step.number}: {error}")
            continue
        for what, pattern in step.patterns:
            found = find_statements(pattern, node)
            if not found:
                unmatched.append(f"step {step.number}: {what} '{pattern}' matches nothing in {step.scope}")
            for hit in found:
                body = hit.block.body  # type: ignore[attr-defined]
                first, last = positions[body[hit.start]], positions[body[hit.end - 1]]
                lines = _lines(CodeRange(first.start, last.end), to_shipped)
                matches.append(MatchView(step.number, step.scope, what, lines, _captures(module, hit.bindings)))
    return Location(vendor, shipped, patch.scope, scope_lines, earlier, status, detail, outcome.diagnostic,
                    tuple(matches), tuple(unmatched))


def _lines(where: CodeRange, to_shipped: "_LineMap") -> tuple[int | None, int | None]:
    return to_shipped(where.start.line), to_shipped(where.end.line)


def _captures(module: cst.Module, bindings: Bindings) -> tuple[Capture, ...]:
    captures = []
    for name, value in bindings.items():
        if name.endswith(layout_key("")):  # the layout kept beside an argument run, not a capture
            continue
        if isinstance(value, tuple):
            parts = [_code(module, node) for node in value]
            joiner = "\n" if any(isinstance(n, cst.BaseStatement) for n in value) else ", "
            text = joiner.join(part.rstrip(",").strip() if joiner == ", " else part for part in parts)
            captures.append(Capture(f"$...{name}", text))
        else:
            captures.append(Capture(f"${name}", _code(module, value)))
    return tuple(captures)


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    # The file's own text of the node, with its line endings made LF for display.
    text = module.code_for_node(node).replace("\r\n", "\n")
    lines = text.strip("\n").splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    first = lines[0].strip() if lines else ""
    return "\n".join([first, *(line[indent:] if line.strip() else "" for line in lines[1:])]).strip()


# --------------------------------------------------------------------------- steps in words


def _step_view(number: int, step: Operation, scope: str) -> StepView:
    expect = getattr(step, "expect", 1)
    times = "once" if expect == 1 else f"{expect} times"
    if isinstance(step, Replace) and step.pattern is not None:
        words = (f"replace, in {scope}, each run of statements matching (expected {times}):",
                 *_indented(step.pattern.source), "with:", *_indented(step.code))
        return StepView(number, step.name, scope, words, (("pattern", step.pattern),))
    if isinstance(step, Insert) and step.anchor is not None:
        words = (f"insert, in {scope}, {step.position} each run of statements matching the anchor "
                 f"(expected {times}):", *_indented(step.anchor.source), "the code:", *_indented(step.code))
        return StepView(number, step.name, scope, words, (("anchor", step.anchor),))
    if isinstance(step, ReuseBuffers) and step.anchor is not None:
        lines = [f"reuse buffers, in {scope}: right after the anchor", *_indented(step.anchor.source),
                 "allocate once:", *_indented("\n".join(f"{b.buffer} = {b.allocate}" for b in step.buffers)),
                 f"and rewrite each assignment of a temporary (expected {times} each), every read of it, "
                 "and drop it from 'del':"]
        patterns: list[tuple[str, Pattern]] = [("anchor", step.anchor)]
        for buffer in step.buffers:
            compute = decode_metavariables(cst.Module([]).code_for_node(buffer.compute)).strip()
            into = buffer.into.replace("$OUT", buffer.buffer)
            lines.extend(_indented(f"{buffer.temporary} = {compute}  ->  {into}; reads of "
                                   f"{buffer.temporary} read {buffer.buffer}"))
            patterns.append((f"{buffer.temporary} = ...", Pattern.parse(f"{buffer.temporary} = {compute}")))
        return StepView(number, step.name, scope, tuple(lines), tuple(patterns))
    return StepView(number, step.name, scope, (f"{step.name} in {scope}: {step.describe()}",), ())


def _indented(code: str) -> list[str]:
    return [f"    {line}" if line.strip() else "" for line in code.strip("\n").splitlines()]


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{minimum}..{maximum}"
    if minimum is not None:
        return f"min {minimum}"
    return f"max {maximum}" if maximum is not None else ""


# --------------------------------------------------------------------------- rendering


def render_lines(explanation: Explanation) -> list[str]:
    """Render the explanation as the text ``patcher explain`` prints."""
    patch = explanation.patch
    header = patch.header().rstrip("\n").splitlines()
    # The header keeps the description's own blank lines; one between paragraphs is enough here.
    header = [line for i, line in enumerate(header) if line.strip() or (i and header[i - 1].strip())]
    out = [f"patch {patch.id}  ({patch.path})", "", *header, "", f"Target: {patch.target}", f"Scope: {patch.scope}"]
    markers = [("applied when", patch.applied_when), ("requires", patch.requires)]
    for title, found in markers:
        for marker in found:
            where = "" if marker.scope == patch.scope else f" (in {marker.scope})"
            out.append(f"{title.capitalize()}: '{marker.pattern}'{where}")
    out += ["", "Parameters:" if explanation.params else "Parameters: none"]
    for param in explanation.params:
        changed = "  (set)" if param.value != param.default else ""
        bounds = f", {param.bounds}" if param.bounds else ""
        out.append(f"  {param.name} ({param.type}{bounds}) = {param.value!r}{changed}; default {param.default!r}")
        if param.help:
            out.append(f"      {param.help}")
    out += ["", "Steps:"]
    for step in explanation.steps:
        out.append(f"  {step.number}. {step.words[0]}")
        out.extend(f"     {line}" if line else "" for line in step.words[1:])
    if explanation.location is not None:
        out += ["", *_location_lines(explanation.location)]
    return out


def _location_lines(location: Location) -> list[str]:
    out = [f"In {location.vendor}:", f"  shipped file: {location.shipped}"]
    if location.earlier:
        out.append(f"  earlier in the series, {', '.join(location.earlier)} changed it; "
                   "line numbers are the shipped file's")
    scope = _show_lines(location.scope_lines) if location.scope_lines else "not in the file"
    status = f"{location.status}: {location.detail}" if location.detail else location.status
    out += [f"  scope {location.scope}: {scope}", f"  this patch: {status}"]
    if location.diagnostic is not None:
        out.append(f"  {location.diagnostic.describe()}")
    for found in location.matches:
        out.append(f"  step {found.step}, {found.what}: {_show_lines(found.lines)}")
        for capture in found.captures:
            text = capture.text.splitlines() or [""]
            out.append(f"      {capture.name} = {text[0]}")
            out.extend(f"      {' ' * (len(capture.name) + 3)}{line}" for line in text[1:])
    out.extend(f"  {line}" for line in location.unmatched)
    return out


def _show_lines(lines: tuple[int | None, int | None]) -> str:
    first, last = lines
    if first is None or last is None:
        return "code an earlier patch of the series wrote" + (f" (from line {first})" if first else "")
    return f"line {first}" if first == last else f"lines {first}-{last}"


def to_json(explanation: Explanation) -> dict[str, Any]:
    """Give the explanation as plain data: header, parameters, steps, and the matches in a drop."""
    patch = explanation.patch
    return {
        "patch": {
            "id": patch.id, "path": str(patch.path), "summary": patch.summary, "description": patch.description,
            "origin": patch.origin, "last_update": patch.last_update, "target": patch.target, "scope": patch.scope,
            "applied_when": [{"pattern": _source(m.pattern), "scope": m.scope} for m in patch.applied_when],
            "requires": [{"pattern": _source(m.pattern), "scope": m.scope} for m in patch.requires],
        },
        "params": [
            {"name": p.name, "type": p.type, "default": p.default, "value": p.value, "set": p.value != p.default,
             "help": p.help, "bounds": p.bounds}
            for p in explanation.params
        ],
        "steps": [
            {"number": s.number, "op": s.op, "scope": s.scope, "words": list(s.words),
             "patterns": [{"what": what, "pattern": _source(pattern)} for what, pattern in s.patterns]}
            for s in explanation.steps
        ],
        "in": None if explanation.location is None else _location_json(explanation.location),
    }


def _location_json(location: Location) -> dict[str, Any]:
    return {
        "vendor": location.vendor,
        "shipped": location.shipped,
        "scope": location.scope,
        "scope_lines": None if location.scope_lines is None else list(location.scope_lines),
        "earlier": list(location.earlier),
        "status": location.status,
        "detail": location.detail,
        "diagnostic": None if location.diagnostic is None else location.diagnostic.to_json(),
        "matches": [
            {"step": m.step, "file": location.shipped, "scope": m.scope, "what": m.what, "lines": list(m.lines),
             "captures": {c.name: c.text for c in m.captures}}
            for m in location.matches
        ],
        "unmatched": list(location.unmatched),
    }


def _source(pattern: Pattern) -> str:
    return pattern.source.strip("\n")
