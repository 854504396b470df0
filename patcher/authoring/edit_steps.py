"""Turn the changes of a hand edit into steps, each checked by running the real operation.

For each change (or each group of changes that made the same edit in
several places of one scope, which one step with ``expect = N`` writes),
candidate steps are tried from the most general to the least:

1. an insert after (then before) an anchor of one to three statements,
   when the change only adds statements;
2. a replace of the changed run, then of the run with up to three
   unchanged statements on either side;
3. a replace of the compound statement(s) enclosing the run (up to three
   levels, within the scope), the rest of their blocks captured as
   ``$...BEFORE``/``$...AFTER``/``$...BODY``, with and without a
   statement on either side.

Each shape is generalised as far as it goes (``generalise``). A candidate
is kept when the operation, applied to the file as the steps before it
left it, gives exactly the file with this change made: so its pattern
matches exactly as often as it should, in the right place, and its
template writes the edited bytes. When none does, the change is refused,
naming its lines.

Markers come from the added code: a statement that the edited file holds
exactly as often as the step writes it, and the original lacks. Requires
are the names the added code reads that neither the step's own pattern
mentions nor the added code assigns, but an assignment in the scope does.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import libcst as cst

from ..patchset.runner import _Codegen as Codegen  # Module.code, replaying statements it generated before
from ..transforms import OPERATIONS
from ..transforms.pattern import Pattern, PatternSyntaxError, contains, find_expressions, find_statements, same_code
from ..transforms.scope import ScopeNotFound, find_scope
from ..transforms.splice import BodyEdit, edit_bodies
from .edit_scopes import Change, Level, node_code, own_blocks, replace_blocks, substitute
from .generalise import Level as Generality
from .generalise import anchor_text, fresh_names, insert_code, lift, replace_texts

MAX_ANCHOR = 3  # statements an insert's anchor may span
EXTENSIONS = ((1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 2), (3, 0), (0, 3), (3, 3))  # (before, after)
MAX_LIFT = 3  # enclosing compound statements a replace may take in
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


@dataclass(frozen=True)
class Step:
    """One step of the learned patch, and the changes it makes."""

    op: str  # "replace" or "insert"
    position: str  # "before" or "after" for an insert, "" for a replace
    scope: str
    pattern: str  # the pattern, or the insert's anchor
    code: str
    expect: int
    changes: tuple[Change, ...]
    covered: tuple[cst.BaseStatement, ...]  # the original statements its pattern or anchor spans

    def table(self, patch_scope: str) -> dict[str, Any]:
        """The step's TOML table (code not yet escaped for Jinja), ``scope`` only when not the patch's."""
        table: dict[str, Any] = {"op": self.op}
        if self.scope != patch_scope:
            table["scope"] = self.scope
        table["before" if self.position == "before" else "after" if self.position else "pattern"] = self.pattern
        table["code"] = self.code
        if self.expect != 1:
            table["expect"] = self.expect
        return table

    @property
    def words(self) -> str:
        """Say what the step does, in a few words."""
        if self.op == "insert":
            return f"insert {self.position} an anchor in {self.scope or 'the module'}"
        times = f" ({self.expect} places)" if self.expect != 1 else ""
        return f"replace in {self.scope or 'the module'}{times}"


@dataclass(frozen=True)
class Marker:
    """A pattern looked for in a scope: an applied-when marker or a requirement."""

    scope: str
    pattern: str


class ChangeRefused(Exception):
    """No step can make this change; ``change`` is the smallest region that blocks the edit."""

    def __init__(self, change: Change, scope: str, why: str, hint: str = ""):
        super().__init__(why)
        self.change = change
        self.scope = scope
        self.why = why
        self.hint = hint  # what to change in the edit, when that is the way out


@dataclass
class _Resolved:
    change: Change
    scope: str
    liftable: tuple[Level, ...]  # enclosing compound statements inside the scope, outermost first
    plain: str = field(default="")  # code of the removed and added runs, to group equal edits


# --------------------------------------------------------------------------- scopes


def resolve_scope(change: Change, original: cst.Module, edited: cst.Module, forced: str | None) -> tuple[str, tuple[Level, ...]]:
    """Name the smallest class or function holding CHANGE that ``find_scope`` finds in both files.

    ``forced`` (``--scope``) names it instead; a change outside it is refused.
    """
    levels = change.levels
    if forced is not None:
        # The way out that works: the scope the change is learned in without --scope.
        natural = resolve_scope(change, original, edited, None)[0] or "the module"
        hint = f"leave --scope out: this change is in {natural}"
        try:
            node = find_scope(original, forced)
        except ScopeNotFound as error:
            raise ChangeRefused(change, forced, f"--scope {forced}: {error}", hint) from None
        if node is original:
            return forced, levels
        for index, level in enumerate(levels):
            if level.original is node:
                return forced, levels[index + 1:]
        raise ChangeRefused(change, forced, f"the change is outside --scope {forced}", hint)
    definitions = [(i, level) for i, level in enumerate(levels) if type(level.original) in _DEFINITIONS]
    for count in range(len(definitions), 0, -1):
        index, level = definitions[count - 1]
        name = ".".join(lv.original.name.value for _, lv in definitions[:count])  # type: ignore[attr-defined]
        try:
            if find_scope(original, name) is level.original and find_scope(edited, name) is level.edited:
                return name, levels[index + 1:]
        except ScopeNotFound:
            continue  # defined twice (under if/else, say): the scope above names it
    return "", levels


# --------------------------------------------------------------------------- steps


def learn_steps(original: cst.Module, edited: cst.Module, changes: Sequence[Change],
                forced_scope: str | None = None, codegen: "Codegen | None" = None) -> list[Step]:
    """Find a checked step for every change, in file order; raise ChangeRefused for the first that has none."""
    codegen = codegen or Codegen()
    resolved = []
    for change in changes:
        scope, liftable = resolve_scope(change, original, edited, forced_scope)
        plain = node_code(change.removed) + "\0" + node_code(change.added)
        resolved.append(_Resolved(change, scope, liftable, plain))
    indent = edited.default_indent
    steps: list[Step] = []
    done: list[Change] = []
    current = original
    for group in _groups(resolved):
        found = _learn_group(group, current, original, done, indent, codegen)
        if found is None and len(group) > 1:
            for single in group:  # the same edit in several places, but no one step for all: one each
                found = _learn_group([single], current, original, done, indent, codegen)
                if found is None:
                    raise ChangeRefused(single.change, single.scope, *_why(single, current, indent))
                step, current = found
                steps.append(step)
                done.append(single.change)
            continue
        if found is None:
            raise ChangeRefused(group[0].change, group[0].scope, *_why(group[0], current, indent))
        step, current = found
        steps.append(step)
        done.extend(r.change for r in group)
    return steps


def _groups(resolved: list[_Resolved]) -> list[list[_Resolved]]:
    """Group changes that make the same edit in the same scope (in file order, each at its first place)."""
    groups: list[list[_Resolved]] = []
    by_key: dict[tuple[str, str], list[_Resolved]] = {}
    for item in resolved:
        key = (item.scope, item.plain)
        if key in by_key:
            by_key[key].append(item)
            continue
        by_key[key] = [item]
        groups.append(by_key[key])
    return groups


def _learn_group(group: list[_Resolved], current: cst.Module, original: cst.Module, done: list[Change],
                 indent: str, codegen: "Codegen") -> tuple[Step, cst.Module] | None:
    expected = codegen.code(substitute(original, [*done, *(r.change for r in group)]))
    first = group[0]
    shapes = _single_shapes(first, indent) if len(group) == 1 else _group_shapes(first, indent)
    tried: set[tuple[str, str, str, str]] = set()
    for op, position, pattern, code, covered in shapes:
        key = (op, position, pattern, code)
        if key in tried:
            continue
        tried.add(key)
        step = Step(op, position, first.scope, pattern, code, len(group), tuple(r.change for r in group), covered)
        result = apply_step(step, current)
        if result is not None and codegen.code(result) == expected:
            return step, result
    return None


def apply_step(step: Step, module: cst.Module) -> cst.Module | None:
    """Run STEP as the patch will: its operation, built from its table, on MODULE; None if it fails."""
    table = step.table(patch_scope=step.scope)
    try:
        operation = OPERATIONS[step.op].from_config(table, lambda key, text: text)
        return operation.apply(module, step.scope)
    except Exception:  # a candidate that does not fit (no match, too many, bad code) is simply not taken
        return None


_Shape = tuple[str, str, str, str, tuple[cst.BaseStatement, ...]]  # op, position, pattern, code, covered


def _group_shapes(item: _Resolved, indent: str) -> Iterator[_Shape]:
    """Shapes for one step that makes the same edit in several places: the run itself, or an insert."""
    change = item.change
    if change.start == change.end:
        yield from _inserts(change, indent)
        return
    yield from _replaces(change.removed, change.added, change.removed, indent)


def _single_shapes(item: _Resolved, indent: str) -> Iterator[_Shape]:
    change = item.change
    inserting = change.start == change.end
    if inserting:
        yield from _inserts(change, indent)
    else:
        yield from _replaces(change.removed, change.added, change.removed, indent)
    for before, after in EXTENSIONS:
        run = _extended(change.original_block, change.edited_block, change.start, change.end,
                        change.edited_start, change.edited_end, before, after)
        if run is not None:
            yield from _replaces(run[0], run[1], run[0], indent)
    for depth in range(1, min(len(item.liftable), MAX_LIFT) + 1):
        yield from _lifted(change, item.liftable[-depth:], inserting, indent)


def _inserts(change: Change, indent: str) -> Iterator[_Shape]:
    body = list(change.original_block.body)  # type: ignore[attr-defined]
    code = insert_code(change.added, indent)
    if code is None:
        return
    anchors = [("after", body[change.start - n:change.start]) for n in range(1, MAX_ANCHOR + 1) if change.start - n >= 0]
    anchors += [("before", body[change.start:change.start + n]) for n in range(1, MAX_ANCHOR + 1)
                if change.start + n <= len(body)]
    for position, anchor in anchors:
        for bodies, level in ((True, Generality.ALL), (True, Generality.ARGUMENTS), (True, Generality.NONE),
                              (False, Generality.NONE)):
            text = anchor_text(anchor, level, bodies, indent)
            if text is not None:
                yield "insert", position, text, code, tuple(anchor)


def _replaces(removed: Sequence[cst.BaseStatement], added: Sequence[cst.BaseStatement],
              covered: Sequence[cst.BaseStatement], indent: str) -> Iterator[_Shape]:
    if not removed:
        return
    for level in (Generality.BODIES, Generality.ALL, Generality.ARGUMENTS, Generality.NONE):
        texts = replace_texts(removed, added, level, indent)
        if texts is not None:
            yield "replace", "", texts[0], texts[1], tuple(covered)


def _extended(original_block: cst.CSTNode, edited_block: cst.CSTNode, start: int, end: int, edited_start: int,
              edited_end: int, before: int, after: int
              ) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement], int, int, int, int] | None:
    """The run with BEFORE and AFTER unchanged statements around it, in both files; None past the block."""
    old, new = list(original_block.body), list(edited_block.body)  # type: ignore[attr-defined]
    s, t, es, et = start - before, end + after, edited_start - before, edited_end + after
    if s < 0 or es < 0 or t > len(old) or et > len(new):
        return None
    pairs = [*zip(old[s:start], new[es:edited_start]), *zip(old[end:t], new[edited_end:et])]
    if any(node_code(a) != node_code(b) for a, b in pairs):
        return None  # a neighbour that changed too is another change's
    return old[s:t], new[es:et], s, t, es, et


def _lifted(change: Change, levels: Sequence[Level], inserting: bool, indent: str) -> Iterator[_Shape]:
    """Replace the enclosing statements LEVELS (outermost first) with the run inside them, the rest captured."""
    inner_options = ((1, 0), (0, 1)) if inserting else ((0, 0), (1, 0), (0, 1))
    for inner_before, inner_after in inner_options:
        run = _extended(change.original_block, change.edited_block, change.start, change.end,
                        change.edited_start, change.edited_end, inner_before, inner_after)
        if run is None:
            continue
        removed, added, s, t, es, et = run
        pattern_names, template_names = fresh_names(), fresh_names()
        ok = True
        inner: Level | None = None  # the level lifted just before, inside this one
        for depth, level in enumerate(reversed(levels)):
            if inner is not None:
                s, t = inner.original_index, inner.original_index + 1
                es, et = inner.edited_index, inner.edited_index + 1
            # Same skeleton (edit_scopes enters no other), so the same blocks in both.
            old_len = len(own_blocks(level.original)[level.block_number].body)
            new_len = len(own_blocks(level.edited)[level.block_number].body)
            if (s > 0) != (es > 0) or (t < old_len) != (et < new_len):
                ok = False
                break
            tag = "" if depth == 0 else str(depth + 1)
            removed = [lift(level.original, level.block_number, s, t, removed, pattern_names, tag)]
            added = [lift(level.edited, level.block_number, es, et, added, template_names, tag)]
            inner = level
        if not ok:
            continue
        outer = levels[0]
        for before, after in ((0, 0), (1, 0), (0, 1), (1, 1)):
            around = _extended(outer.original_block, outer.edited_block, outer.original_index,
                               outer.original_index + 1, outer.edited_index, outer.edited_index + 1, before, after)
            if around is None:
                continue
            old_run, new_run = around[0], around[1]
            pattern_run = [*old_run[:before], *removed, *old_run[before + 1:]]
            template_run = [*new_run[:before], *added, *new_run[before + 1:]]
            yield from _replaces(pattern_run, template_run, old_run, indent)


# --------------------------------------------------------------------------- why not


def _why(item: _Resolved, current: cst.Module, indent: str) -> tuple[str, str]:
    """Say why no step fits (and, when the edit can avoid it, how): a '$', a pattern found too often, or layout."""
    change = item.change
    plain = node_code(change.added) + node_code(change.removed)
    if "$" in plain:
        return ("the code holds '$', which patterns and templates read as a metavariable; no step can write it",
                "spell it '\\x24' inside the string (\"\\x245\" is \"$5\"), then run this again")
    run = change.removed or tuple(change.original_block.body[max(change.start - 1, 0):change.start + 1])  # type: ignore[attr-defined]
    texts = replace_texts(run, run, Generality.NONE, indent)
    if texts is not None:
        try:
            pattern = Pattern.parse(texts[0])
            found = len(find_statements(pattern, find_scope(current, item.scope)))
        except (PatternSyntaxError, ScopeNotFound):
            found = 1
        if found != 1:
            where = item.scope or "the module"
            return (f"'{pattern}' is found {found} times in {where}, and neither {MAX_ANCHOR} statements on either "
                    f"side nor the statements around it tell this place apart (a pattern must be unique in its scope)",
                    f"make the same edit in all {found} places (one step then rewrites them all), or")
    return ("no step reproduces the edited code byte for byte: the operations would put its comments or blank "
            "lines elsewhere", "keep the comments and blank lines around the change as they were, or")


# --------------------------------------------------------------------------- markers and requires


def find_markers(steps: Sequence[Step], original: cst.Module, edited: cst.Module, indent: str) -> list[Marker]:
    """One applied-when marker per step where the added code has one: new, and as frequent as the step writes it."""
    markers: list[Marker] = []
    for step in steps:
        own = ((step.scope, text) for text in _marker_texts(step, indent))
        for scope, text in itertools.chain(own, _seam_texts(step, edited, indent)):
            try:
                pattern = Pattern.parse(text)
            except PatternSyntaxError:
                continue
            if _count(pattern, edited) != step.expect or contains(pattern, original):
                continue
            try:
                if not contains(pattern, find_scope(edited, scope)):
                    continue
            except ScopeNotFound:
                continue
            marker = Marker(scope, text)
            if marker not in markers:
                markers.append(marker)
            break
    return markers


def _marker_texts(step: Step, indent: str) -> Iterator[str]:
    """Statements of the added code as patterns: simple ones first, then compound headers over ``$...``."""
    added = [s for change in step.changes[:1] for s in change.added]
    compound: list[str] = []
    for node in _statements(added):
        if type(node) is cst.SimpleStatementLine:
            text = _pattern_of([node], indent)
            if text is not None:
                yield text
        else:
            anything = [cst.SimpleStatementLine(body=[cst.Expr(cst.Name("__pvs____"))])]
            header = replace_blocks(node, {id(b): anything for b in own_blocks(node)})
            text = _pattern_of([header], indent)  # type: ignore[list-item]
            if text is not None:
                compound.append(text)
    yield from compound


def _seam_texts(step: Step, edited: cst.Module, indent: str) -> Iterator[tuple[str, str]]:
    """Runs around the change in the edited file: what is new there may be only where code now meets.

    A change that removes code adds no statement of its own; the statements
    that now stand side by side (or a block that now starts or ends
    otherwise) still tell the edited file from the original.
    """
    change = step.changes[0]
    body = list(change.edited_block.body)  # type: ignore[attr-defined]
    for before, after in ((1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 2)):
        start, end = change.edited_start - before, change.edited_end + after
        if start < 0 or end > len(body) or end == start:
            continue
        text = anchor_text(body[start:end], Generality.NONE, True, indent)
        if text is not None:
            yield step.scope, text
    if change.levels:
        level = change.levels[-1]
        scope = step.scope
        try:
            if find_scope(edited, scope) is level.edited:  # the block is the scope's own: look from outside it
                scope = scope.rpartition(".")[0]
        except ScopeNotFound:
            return
        for before, after in ((1, 1), (1, 0), (0, 1), (0, 0)):
            start, end = max(change.edited_start - before, 0), min(change.edited_end + after, len(body))
            if end == start:
                continue
            run = [s if type(s) is cst.SimpleStatementLine else _bodies_anything(s) for s in body[start:end]]
            lifted = lift(level.edited, level.block_number, start, end, run, fresh_names(), "")
            text = _pattern_of([lifted], indent)
            if text is not None:
                yield scope, text


def _bodies_anything(statement: cst.BaseStatement) -> cst.BaseStatement:
    anything = [cst.SimpleStatementLine(body=[cst.Expr(cst.Name("__pvs____"))])]
    return replace_blocks(statement, {id(b): anything for b in own_blocks(statement)})  # type: ignore[return-value]


def _statements(nodes: Sequence[cst.CSTNode]) -> Iterator[cst.BaseStatement]:
    for node in nodes:
        yield node  # type: ignore[misc]
        if type(node) is not cst.SimpleStatementLine:
            for block in own_blocks(node):
                yield from _statements(list(block.body))


def _pattern_of(statements: Sequence[cst.BaseStatement], indent: str) -> str | None:
    from .generalise import anchor_text

    return anchor_text(statements, Generality.NONE, False, indent)


def _count(pattern: Pattern, module: cst.Module) -> int:
    found = len(find_statements(pattern, module))
    if found:
        return found
    try:
        expression = pattern.expression
    except PatternSyntaxError:
        return 0
    return len(find_expressions(expression, module))


def find_requires(steps: Sequence[Step], original: cst.Module) -> list[Marker]:
    """``NAME = $_`` for each name the added code reads that an assignment in its scope binds and the step does not mention."""
    requires: list[Marker] = []
    for step in steps:
        try:
            scope = find_scope(original, step.scope)
            reads, writes = _names(node_code([s for c in step.changes for s in c.added]))
            mentioned = set().union(*_names(node_code(list(step.covered)))) | set().union(
                *_names(node_code([s for c in step.changes for s in c.removed])))
            assigned = _assignments(node_code(scope) if scope is not original else original.code)
        except SyntaxError:
            continue
        for name in reads:
            if name in writes or name in mentioned or name not in assigned:
                continue
            text = f"{assigned[name]} = $_"
            try:
                if not contains(Pattern.parse(text), scope):
                    continue
            except PatternSyntaxError:
                continue
            marker = Marker(step.scope, text)
            if marker not in requires:
                requires.append(marker)
    return requires


def _names(code: str) -> tuple[dict[str, None], set[str]]:
    """The names CODE reads (in order) and the names it binds."""
    reads: dict[str, None] = {}
    writes: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, None)
            else:
                writes.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            writes.add(node.name)
        elif isinstance(node, ast.arg):
            writes.add(node.arg)
    return reads, writes


def _assignments(code: str) -> dict[str, str]:
    """For each name a plain assignment in CODE binds, the assignment's target as code (first one wins)."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
        if not names or not all(isinstance(n, ast.Name) for n in names):
            continue
        for name in names:
            found.setdefault(name.id, ast.unparse(target))
    return found


# --------------------------------------------------------------------------- where


class Lines:
    """Line numbers of statements in one file, found from one generation of its code.

    Each statement asked about gets a marker comment right above it; the
    markers' lines in the generated code give the statements' lines
    (libcst's position metadata would cost a full pass per file).
    """

    MARK = "# patcher-line-mark-{}"

    def __init__(self, module: cst.Module, codegen: "Codegen | None" = None):
        self.module = module
        self.codegen = codegen or Codegen()

    def spans(self, runs: Sequence[tuple[cst.CSTNode, int, int]]) -> list[tuple[int, int] | None]:
        """First and last line of each run ``block.body[start:end]`` (None for an empty run)."""
        wanted: dict[int, dict[int, int]] = {}  # block id -> statement index -> mark number
        marks = 0
        for block, start, end in runs:
            for index in (start, end - 1) if end > start else ():
                numbers = wanted.setdefault(id(block), {})
                if index not in numbers:
                    numbers[index], marks = marks, marks + 1
        blocks = {id(block): block for block, _, _ in runs}
        edits: dict[int, list[BodyEdit]] = {}
        for block_id, indexes in wanted.items():
            body = blocks[block_id].body  # type: ignore[attr-defined]
            for index, number in indexes.items():
                statement = body[index]
                note = cst.EmptyLine(comment=cst.Comment(self.MARK.format(number)))
                # Above the comments that lead into the statement (they are part of what changed), below blank lines.
                lines = list(statement.leading_lines)
                blank = next((n for n, line in enumerate(lines) if line.comment is not None), len(lines))
                marked = statement.with_changes(leading_lines=[*lines[:blank], note, *lines[blank:]])
                edits.setdefault(block_id, []).append(BodyEdit(index, index + 1, (marked,)))
        lines = self.codegen.code(edit_bodies(self.module, edits)).split("\n") if edits else []
        first: dict[int, int] = {}
        for number, line in enumerate(lines):
            text = line.strip()
            if text.startswith("# patcher-line-mark-"):
                mark = int(text.rsplit("-", 1)[1])
                first[mark] = number + 1 - len(first)  # the marks above it are not the file's lines
        found: list[tuple[int, int] | None] = []
        for block, start, end in runs:
            if end <= start:
                found.append(None)
                continue
            body = block.body  # type: ignore[attr-defined]
            last = body[end - 1]
            height = node_code(last.with_changes(leading_lines=[l for l in last.leading_lines if l.comment])
                               ).rstrip("\n").count("\n")
            found.append((first[wanted[id(block)][start]], first[wanted[id(block)][end - 1]] + height))
        return found


def describe_change(change: Change, original: Lines, edited: Lines, original_name: str, edited_name: str) -> str:
    """Say where a change is: at its lines in the original (or after or before which line), and in the edited file."""
    block = change.original_block
    neighbour = (block, change.start - 1, change.start) if change.start else (block, 0, 1)
    old, around = original.spans([(block, change.start, change.end), neighbour])
    (new,) = edited.spans([(change.edited_block, change.edited_start, change.edited_end)])
    if old is None:
        assert around is not None
        where = f"after line {around[1]}" if change.start else f"before line {around[0]}"
        old_text = f"{where} of {original_name}"
    else:
        old_text = f"at {_range(old)} of {original_name}"
    new_text = f"{_range(new)} of {edited_name}" if new is not None else f"removed in {edited_name}"
    return f"{old_text} ({new_text})"


def _range(span: tuple[int, int]) -> str:
    return f"line {span[0]}" if span[0] == span[1] else f"lines {span[0]}-{span[1]}"


__all__ = ["ChangeRefused", "Lines", "Marker", "Step", "apply_step", "describe_change", "find_markers",
           "find_requires", "learn_steps", "resolve_scope", "same_code"]
