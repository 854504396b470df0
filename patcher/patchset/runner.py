"""Run the series' patches on one source file; every outcome is a value, never an exit."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState  # what Module.code generates with (see _Codegen)

from ..depth import HINT, parse_problem
from ..linediff import opcodes as line_opcodes
from ..records import Diagnostic, StepPrint
from ..transforms.base import ConfigError, Operation, StepFailed
from ..transforms.closest import close_scopes, find_closest, step_patterns
from ..transforms.fingerprint import step_print
from ..transforms.pattern import Pattern, contains, describe_syntax_error, find_statements
from ..transforms.scope import ScopeNotFound, find_scope
from .model import AppliedMarker, Patch
from .sparse import parse_sparse
from .outcome import FileOutcome, PatchOutcome, Status  # re-exported: callers import them from here too


def patch_source(path: str, source: bytes, patches: Sequence[Patch], *,
                 inputs: list[bytes] | None = None) -> FileOutcome:
    """Apply ``patches`` in order to ``source``, keeping every byte they do not change.

    A later patch that breaks an earlier patch's applied-when markers fails
    (see ``run_series``), and the file is what the other patches give.
    ``inputs``, when given, receives the bytes each patch was run on, in
    order: ``explain`` shows a patch's matches in the file as it receives
    it, from this one run of the series.
    """
    return run_series(path, source, patches, inputs=inputs).file


@dataclass(frozen=True)
class MarkerBreak:
    """A later patch of the series undid code that an earlier patch's applied-when marker looks for."""

    owner: Patch  # the earlier patch, which re-apply would no longer recognise
    marker: AppliedMarker
    breaker: Patch  # the first later patch after which the marker no longer holds
    scope_gone: bool = False  # the breaker removed the marker's scope altogether

    @property
    def detail(self) -> str:
        """Say, as the breaker's failure, what it broke and what to do."""
        owner, breaker = self.owner.id, self.breaker.id
        what = (f"removes {self.marker.scope}, where patch {owner}'s applied-when marker '{self.marker.pattern}' "
                "must hold" if self.scope_gone else
                f"rewrites '{self.marker.pattern}' in {self.marker.scope}, which patch {owner}'s applied-when "
                "marker needs")
        return (f"{what}: {owner} would not be recognised on re-apply, and would apply again; "
                f"make {breaker} leave that code, or change {owner}'s marker")


@dataclass(frozen=True)
class SeriesRun:
    """What ``run_series`` gives: the file's outcome, and the markers later patches broke."""

    file: FileOutcome
    breaks: tuple[MarkerBreak, ...] = ()


def run_series(path: str, source: bytes, patches: Sequence[Patch], *,
               inputs: list[bytes] | None = None) -> SeriesRun:
    """Apply ``patches`` in order, then check that every patch still present is recognised by its markers.

    Each patch's markers hold right after it (``run_patch`` checks); a later
    patch may still rewrite what they look for, and then running the series
    on its own output would apply the earlier patch again. So, after the
    whole series, each applied or already-applied patch's markers must
    hold on the final code: the first later patch after which one does not
    fails, and the series runs again without it (so the file and the other
    outcomes are what the rest of the series gives).
    """
    run, versions = _run_patches(path, source, patches, inputs)
    breaks = _markers_broken_later(patches, run.outcomes, versions)
    if not breaks:
        return SeriesRun(run)
    breakers = {b.breaker.id: b for b in reversed(breaks)}  # each breaker's first break
    kept_inputs: list[bytes] | None = None if inputs is None else []
    rest = run_series(path, source, [p for p in patches if p.id not in breakers], inputs=kept_inputs)
    if inputs is not None and kept_inputs is not None:
        # The run that counts is the one without the breakers: a breaker
        # receives what the kept patches before it made.
        inputs.clear()
        following = iter(kept_inputs)
        pending = 0
        for patch in patches:
            if patch.id in breakers:
                pending += 1
                continue
            received = next(following)
            inputs.extend([received] * (pending + 1))
            pending = 0
        inputs.extend([rest.file.patched] * pending)
    kept = iter(rest.file.outcomes)
    outcomes = tuple(PatchOutcome(p, Status.FAILED, breakers[p.id].detail) if p.id in breakers else next(kept)
                     for p in patches)
    file = FileOutcome(path, source, rest.file.patched, outcomes, rest.file.parse_error)
    return SeriesRun(file, (*breaks, *rest.breaks))


def _markers_broken_later(patches: Sequence[Patch], outcomes: Sequence[PatchOutcome],
                          versions: Sequence[cst.Module]) -> tuple[MarkerBreak, ...]:
    """Find each marker of an applied or already-applied patch that no longer holds once the series is done.

    ``versions[i]`` is the module after ``patches[i]``; the breaker is the
    first later patch after which the marker stops holding.
    """
    if not versions:
        return ()
    final = versions[-1]
    breaks = []
    for index, outcome in enumerate(outcomes):
        if outcome.status is Status.FAILED:
            continue
        for marker in outcome.patch.applied_when:
            # The marker held right after its patch (run_patch checks an
            # applied patch's result; an already-applied one held before).
            # Nodes are immutable and shared between versions: a scope no
            # later patch rebuilt is the same object, and holds it still.
            if _same_scope(versions[index], final, marker.scope) or _still_holds(final, marker) is True:
                continue
            for later in range(index + 1, len(versions)):
                holds = _still_holds(versions[later], marker)
                if holds is not True:
                    breaks.append(MarkerBreak(outcome.patch, marker, patches[later], scope_gone=holds is None))
                    break
    return tuple(breaks)


def _same_scope(before: cst.Module, after: cst.Module, scope: str) -> bool:
    """Whether ``scope`` is the very same node in both versions of the module."""
    if before is after:
        return True
    try:
        return find_scope(before, scope) is find_scope(after, scope)
    except ScopeNotFound:
        return False


def _still_holds(module: cst.Module, marker: AppliedMarker) -> bool | None:
    """Whether ``marker`` holds in ``module``; None when its scope is gone."""
    try:
        return _holds(module, marker.scope, marker.pattern)
    except ScopeNotFound:
        return None


def _run_patches(path: str, source: bytes, patches: Sequence[Patch],
                 inputs: list[bytes] | None = None) -> tuple[FileOutcome, list[cst.Module]]:
    """Run each patch in turn; also return the module after each patch (empty when the file is not patchable)."""
    deep = parse_problem(source)  # before libcst, whose parser crashes on deep nesting
    if deep is not None:
        return FileOutcome(path, source, source, (), f"{deep} ({HINT})"), []
    # A large file is parsed only where the series can look (sparse.py);
    # a failure is computed again on the whole tree, for its diagnostics.
    sparse = parse_sparse(source, patches)
    if sparse is not None:
        received: list[bytes] | None = None if inputs is None else []
        run = _run_on(path, source, sparse, patches, received, sparse=True)
        if run is not None:
            if inputs is not None and received is not None:
                inputs.extend(received)
            return run
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return FileOutcome(path, source, source, (), _why_not_parsed(source, describe_syntax_error(error))), []
    except SyntaxError as error:  # libcst: undecodable in the first lines, or a bad coding line
        return FileOutcome(path, source, source, (), f"cannot be decoded: {error.msg} "
                           "(not UTF-8 and no '# -*- coding: ... -*-' line)"), []
    except UnicodeDecodeError as error:  # libcst: undecodable further down
        line = source[: error.start].count(b"\n") + 1
        return FileOutcome(path, source, source, (), f"cannot be decoded: line {line}: not {error.encoding} "
                           "(declare the encoding with a '# -*- coding: ... -*-' line)"), []
    run = _run_on(path, source, module, patches, inputs)
    if run is None:
        # libcst keeps CRLF, BOMs, tabs and encodings; a lone CR is the one
        # thing it would rewrite, and that would change bytes no patch touches.
        return FileOutcome(path, source, source, (),
                           "would not round-trip byte for byte (lone CR line endings?); "
                           "convert it to LF or CRLF line endings first"), []
    return run


def _run_on(path: str, source: bytes, module: cst.Module, patches: Sequence[Patch],
            inputs: list[bytes] | None, *, sparse: bool = False) -> tuple[FileOutcome, list[cst.Module]] | None:
    """Run the series on ``module``, parsed from ``source``; None if its code is not ``source`` byte for byte.

    On a ``sparse`` tree, also None as soon as a patch fails, before any
    diagnostic is made: the caller runs the series again on the whole tree.
    """
    # Generating code walks the whole tree: do it once per version of the
    # module, keeping the text of the current one; the versions share every
    # top-level statement a patch did not touch, generated once (_Codegen).
    codegen = _Codegen()
    code = codegen.code(module)
    if code.encode(module.encoding) != source:
        return None
    read = module
    outcomes = []
    versions: list[cst.Module] = []
    owners = _LineOwners()
    for patch in patches:
        if inputs is not None:
            inputs.append(code.encode(module.encoding))
        previous = module
        module, outcome = run_patch(patch, module, read, diagnose=not sparse)
        if outcome.status is Status.APPLIED:
            new_code = codegen.code(module)
            unwritable = _unwritable(new_code, module.encoding)
            clash = owners.claim(patch.id, code, new_code) if unwritable is None else None
            if unwritable is not None:
                outcome = PatchOutcome(patch, Status.FAILED, unwritable)
                module = previous
            elif clash is not None:
                other, line = clash
                outcome = PatchOutcome(patch, Status.FAILED,
                                       f"rewrites code that patch {other} wrote (line {line}); "
                                       "two patches must not rewrite the same code: merge them or reorder the series")
                module = previous
            else:
                code = new_code
        if sparse and outcome.status is Status.FAILED:
            return None  # a failure or a clash: the whole tree says why
        outcomes.append(outcome)
        versions.append(module)
    return FileOutcome(path, source, code.encode(module.encoding), tuple(outcomes)), versions


def _unwritable(code: str, encoding: str) -> str | None:
    """Why ``code`` cannot be saved in the file's own ``encoding`` (a coding cookie's, or UTF-8), or None."""
    try:
        code.encode(encoding)
    except UnicodeEncodeError as error:
        character = error.object[error.start]
        line = error.object.count("\n", 0, error.start) + 1
        return (f"writes {character!r} (U+{ord(character):04X}) on line {line}, which the file's encoding "
                f"({encoding}) cannot hold: write it as an escape in a string, or change the patch")
    return None


class _Codegen:
    """Generate a module's code as ``Module.code`` does, reusing the tokens of unchanged statements.

    libcst nodes are immutable and a patch rebuilds only the path from the
    module to its edits, so the next version of a module holds the very same
    objects for every statement it did not change. A statement's code
    depends only on the indentation it starts at (no node reads the tokens
    before it), so its tokens are kept per (statement, indentation) and
    replayed. Classes and functions are generated through a stand-in whose
    body statements replay what they can: a patch that rewrites one method
    regenerates that method, not the class around it.
    """

    def __init__(self) -> None:
        self._tokens: dict[tuple[int, str, str, tuple[str, ...]], tuple[cst.CSTNode, list[str]]] = {}

    def code(self, module: cst.Module) -> str:
        """Return ``module.code``, byte for byte."""
        state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
        for node in module.header:
            node._codegen(state)
        for statement in module.body:
            self.emit(statement, state)
        for node in module.footer:
            node._codegen(state)
        # What Module._codegen_impl does after its nodes.
        if module.has_trailing_newline:
            if not state.tokens:
                state.add_token(state.default_newline)
        else:
            state.pop_trailing_newline()
        return "".join(state.tokens)

    def emit(self, node: cst.CSTNode, state: CodegenState) -> None:
        """Add ``node``'s tokens to ``state``: replayed if this node was generated at this indentation."""
        key = (id(node), state.default_indent, state.default_newline, tuple(state.indent_tokens))
        kept = self._tokens.get(key)
        if kept is not None and kept[0] is node:
            state.tokens.extend(kept[1])
            return
        start = len(state.tokens)
        body = getattr(node, "body", None)
        if type(node) in (cst.ClassDef, cst.FunctionDef) and type(body) is cst.IndentedBlock:
            inner = tuple(_Replay(statement, self) for statement in body.body)
            node.with_changes(body=body.with_changes(body=inner))._codegen(state)
        else:
            node._codegen(state)
        self._tokens[key] = (node, state.tokens[start:])  # the node is held: its id stays its own


@dataclass(frozen=True)
class _Replay(cst.BaseCompoundStatement):
    """Stand for a statement in a body while generating code: ``_Codegen`` emits it, or replays its tokens."""

    statement: cst.CSTNode
    codegen: _Codegen

    def _visit_and_replace_children(self, visitor: cst.CSTVisitorT) -> "_Replay":
        return self

    def _codegen_impl(self, state: CodegenState) -> None:
        self.codegen.emit(self.statement, state)


class _LineOwners:
    """Track which patch wrote each line, to catch two patches rewriting the same code."""

    def __init__(self) -> None:
        self.owners: list[str | None] | None = None  # per line of the current code: the patch that wrote it

    def claim(self, patch_id: str, before: str, after: str) -> tuple[str, int] | None:
        """Record what ``patch_id`` changed; return (other patch, line) if it rewrote another's lines."""
        # Lines as editors count them: splitlines() would also split at form feeds and U+2028.
        old, new = before.split("\n"), after.split("\n")
        owners = self.owners if self.owners is not None else [None] * len(old)
        # difflib's alignment (autojunk off: a line repeated all over the file
        # is still matched), in near-linear time on large files (linediff).
        opcodes = line_opcodes(old, new)
        for tag, i1, i2, _, _ in opcodes:
            if tag in ("replace", "delete"):
                for line in range(i1, i2):
                    other = owners[line]
                    if other is not None:
                        return other, line + 1
        # Lines no change touched keep their writer, wherever they move;
        # the lines this patch wrote are its own.
        moved: list[str | None] = []
        for tag, i1, i2, j1, j2 in opcodes:
            moved += owners[i1:i2] if tag == "equal" else [patch_id] * (j2 - j1)
        self.owners = moved
        return None


def _why_not_parsed(source: bytes, where: str) -> str:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        ast.parse(source)
    except (SyntaxError, ValueError) as error:
        if isinstance(error, SyntaxError) and error.lineno:
            # Python names the line the image's interpreter stops at (and
            # python-3.10 reports); libcst's can be the one after it.
            where = f"line {error.lineno}: {error.msg}"
        return f"{where}; it does not parse under Python {version} either (Python 2 code, or a broken file?)"
    return f"{where}; it parses under Python {version} but not for libcst (newer syntax?)"


def run_patch(patch: Patch, module: cst.Module, read: cst.Module | None = None, *,
              diagnose: bool = True) -> tuple[cst.Module, PatchOutcome]:
    """Apply one patch: already applied, applied, or failed with the reason and the closest code.

    ``read`` is the file as read, before earlier patches of the series: the
    closest code is named by its lines there, the lines a user can open.
    Without ``diagnose`` a failure names neither the closest code nor close
    scopes (a sparse tree's run is given up at its first failure anyway).
    """
    read = read or module
    try:
        applied = [_holds(module, marker.scope, marker.pattern) for marker in patch.applied_when]
    except ScopeNotFound as error:
        scope = next(m.scope for m in patch.applied_when if not _has_scope(module, m.scope))
        return module, _scope_missing(patch, module, scope, str(error))
    if applied and all(applied):
        return module, PatchOutcome(patch, Status.ALREADY_APPLIED)
    for needed in patch.requires:
        try:
            present = _holds(module, needed.scope, needed.pattern)
        except ScopeNotFound as error:
            return module, _scope_missing(patch, module, needed.scope, str(error))
        if not present:
            diagnostic = Diagnostic("requires", needed.scope, str(needed.pattern),
                                    closest=find_closest(needed.pattern, module, find_scope(module, needed.scope), read)
                                    if diagnose else None)
            return module, PatchOutcome(
                patch, Status.FAILED, f"needs '{needed.pattern}' in {needed.scope}, which is not there", diagnostic
            )
    result = module
    prints: list[StepPrint] = []
    for number, step in enumerate(patch.steps, 1):
        scope_name = step.scope or patch.scope
        before = result
        try:
            result = step.apply(result, scope_name)
        except (StepFailed, ScopeNotFound, ConfigError) as error:
            # The first marker is the patch's main sign: if it holds while the
            # patch cannot apply, the file has the patch with other parameters.
            partly = (" (the file already has this patch with other parameters, or edited by hand)"
                      if applied and applied[0] else "")
            detail = f"step {number} ({step.name}): {error} in {scope_name}{partly}"
            if isinstance(error, ScopeNotFound):
                return module, _scope_missing(patch, before, scope_name, detail, number)
            return module, PatchOutcome(patch, Status.FAILED, detail,
                                        _step_diagnostic(number, step, read, before, scope_name) if diagnose else None)
        prints.append(step_print(number, step, before, scope_name))
    # A patch that cannot recognise its own result would apply twice.
    if patch.applied_when and not all(_holds(result, m.scope, m.pattern) for m in patch.applied_when):
        return module, PatchOutcome(
            patch, Status.FAILED, "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
        )
    return result, PatchOutcome(patch, Status.APPLIED, prints=tuple(prints))


def _scope_missing(patch: Patch, module: cst.Module, scope: str, detail: str, step: int | None = None) -> PatchOutcome:
    """Fail because the scope itself is gone, naming the scopes with the closest names."""
    near = close_scopes(module, scope)
    text = detail if detail.endswith(f"(scope {scope})") or step is not None else f"{detail} (scope {scope})"
    return PatchOutcome(patch, Status.FAILED, text, Diagnostic("scope", scope, step=step, scopes=near))


def _step_diagnostic(number: int, step: Operation, original: cst.Module, current: cst.Module,
                     scope: str) -> Diagnostic | None:
    """Say where the step's first pattern that finds nothing came closest, in the lines of the file as it was read."""
    node = find_scope(current, scope)
    for pattern in step_patterns(step):
        if not find_statements(pattern, node):
            # Earlier steps of the patch may have moved lines: report the input's.
            return Diagnostic("step", scope, str(pattern), step=number,
                              closest=find_closest(pattern, current, node, original))
    return None  # each matched, only not as often as the step expects (the message says how often)


def _has_scope(module: cst.Module, scope: str) -> bool:
    try:
        find_scope(module, scope)
    except ScopeNotFound:
        return False
    return True


def _holds(module: cst.Module, scope: str, pattern: object) -> bool:
    return contains(pattern, find_scope(module, scope))  # type: ignore[arg-type]
