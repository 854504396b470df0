"""Run the series' patches on one source file; every outcome is a value, never an exit."""

from __future__ import annotations

import ast
import difflib
import sys
from dataclasses import dataclass
from typing import Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState  # what Module.code generates with (see _Codegen)

from ..depth import HINT, parse_problem
from ..records import Diagnostic, StepPrint
from ..transforms.base import ConfigError, Operation, StepFailed
from ..transforms.closest import close_scopes, find_closest
from ..transforms.fingerprint import step_print
from ..transforms.pattern import Pattern, contains, describe_syntax_error, find_statements
from ..transforms.scope import ScopeNotFound, find_scope
from .model import Patch
from .outcome import FileOutcome, PatchOutcome, Status  # re-exported: callers import them from here too


def patch_source(path: str, source: bytes, patches: Sequence[Patch]) -> FileOutcome:
    """Apply ``patches`` in order to ``source``, keeping every byte they do not change."""
    deep = parse_problem(source)  # before libcst, whose parser crashes on deep nesting
    if deep is not None:
        return FileOutcome(path, source, source, (), f"{deep} ({HINT})")
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return FileOutcome(path, source, source, (), _why_not_parsed(source, describe_syntax_error(error)))
    except SyntaxError as error:  # libcst: undecodable in the first lines, or a bad coding line
        return FileOutcome(path, source, source, (), f"cannot be decoded: {error.msg} "
                           "(not UTF-8 and no '# -*- coding: ... -*-' line)")
    except UnicodeDecodeError as error:  # libcst: undecodable further down
        line = source[: error.start].count(b"\n") + 1
        return FileOutcome(path, source, source, (), f"cannot be decoded: line {line}: not {error.encoding} "
                           "(declare the encoding with a '# -*- coding: ... -*-' line)")
    # Generating code walks the whole tree: do it once per version of the
    # module, keeping the text of the current one; the versions share every
    # top-level statement a patch did not touch, generated once (_Codegen).
    codegen = _Codegen()
    code = codegen.code(module)
    if code.encode(module.encoding) != source:
        # libcst keeps CRLF, BOMs, tabs and encodings; a lone CR is the one
        # thing it would rewrite, and that would change bytes no patch touches.
        return FileOutcome(path, source, source, (),
                           "would not round-trip byte for byte (lone CR line endings?); "
                           "convert it to LF or CRLF line endings first")
    read = module
    outcomes = []
    owners = _LineOwners()
    for patch in patches:
        previous = module
        module, outcome = run_patch(patch, module, read)
        if outcome.status is Status.APPLIED:
            new_code = codegen.code(module)
            clash = owners.claim(patch.id, code, new_code)
            if clash is not None:
                other, line = clash
                outcome = PatchOutcome(patch, Status.FAILED,
                                       f"rewrites code that patch {other} wrote (line {line}); "
                                       "two patches must not rewrite the same code: merge them or reorder the series")
                module = previous
            else:
                code = new_code
        outcomes.append(outcome)
    return FileOutcome(path, source, code.encode(module.encoding), tuple(outcomes))


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
        opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
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
    except (SyntaxError, ValueError):
        return f"{where}; it does not parse under Python {version} either (Python 2 code, or a broken file?)"
    return f"{where}; it parses under Python {version} but not for libcst (newer syntax?)"


def run_patch(patch: Patch, module: cst.Module, read: cst.Module | None = None) -> tuple[cst.Module, PatchOutcome]:
    """Apply one patch: already applied, applied, or failed with the reason and the closest code.

    ``read`` is the file as read, before earlier patches of the series: the
    closest code is named by its lines there, the lines a user can open.
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
                                    closest=find_closest(needed.pattern, module, find_scope(module, needed.scope), read))
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
                                        _step_diagnostic(number, step, read, before, scope_name))
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
    """Say where a step's pattern came closest, in the lines of the file as it was read."""
    pattern = next((p for p in (getattr(step, "pattern", None), getattr(step, "anchor", None))
                    if isinstance(p, Pattern)), None)
    if pattern is None:
        return None
    node = find_scope(current, scope)
    if find_statements(pattern, node):
        return None  # it matched, only not as often as the step expects
    # Earlier steps of the patch may have moved lines: report the input's.
    return Diagnostic("step", scope, str(pattern), step=number,
                      closest=find_closest(pattern, current, node, original))


def _has_scope(module: cst.Module, scope: str) -> bool:
    try:
        find_scope(module, scope)
    except ScopeNotFound:
        return False
    return True


def _holds(module: cst.Module, scope: str, pattern: object) -> bool:
    return contains(pattern, find_scope(module, scope))  # type: ignore[arg-type]
