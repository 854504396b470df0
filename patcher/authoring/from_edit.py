"""``patcher new ID --from-edit``: turn a hand edit of a vendor file into a declarative patch.

The loop engineers already follow (edit ``paged_attn.py`` by hand, try it)
ends here with a patch instead of a diff that breaks on the next drop:

1. the target is the shipped file of VENDOR whose bytes ORIGINAL has (or
   ``--target``), named as patches name targets (its path in the image);
2. the two versions are compared statement by statement
   (``edit_scopes``), and each change becomes a step in the smallest
   class or function that holds it, generalised where that keeps it
   unique and checked by running the real operation (``edit_steps``);
3. markers, requires and an example (the scope before and after) are
   added, and the whole patch is loaded as ``patcher test`` loads it and
   run: it must turn ORIGINAL into EDITED byte for byte, report "already
   applied" on EDITED, and pass its own examples;
4. only then is it written, inactive (``write_inactive``).

An edit that no step can say is refused with the smallest region that
blocks it (exit 2) and nothing is written.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

import libcst as cst

from ..depth import HINT, parse_problem
from ..errors import PatcherError, PatchSetError, ShippingError
from ..patchset.folder import PatchFolder, shown
from ..patchset.load import SERIES, LazyEnvironment, build_patch, read_patch_file
from ..patchset.model import PatchSet
from ..patchset.runner import _Codegen as Codegen  # Module.code, replaying statements it generated before
from ..resources import templates_dir_for
from .edit_scopes import EditNotExpressible, find_changes, forget_code, substitute
from .edit_steps import ChangeRefused, Lines, Marker, Step, describe_change, find_markers, find_requires, learn_steps
from .new import check_id
from .series_file import open_series

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


class EditRefused(PatcherError):
    """The edit cannot be written as a patch; the message names the region that blocks it."""


@dataclass(frozen=True)
class LearnedPatch:
    """A patch learned from one edited file: its TOML text, and what each step does where."""

    patch_id: str
    target: str
    shipped: str  # the file's path in the drop
    text: str
    steps: tuple[Step, ...]
    places: tuple[str, ...]  # per step, its lines in ORIGINAL and EDITED
    markers: tuple[Marker, ...]
    requires: tuple[Marker, ...]


@dataclass(frozen=True)
class FromEdit:
    """What ``new --from-edit`` wrote: the patches, their files, the series, and notes for the user."""

    patches: tuple[LearnedPatch, ...]
    paths: tuple[Path, ...]
    series: Path
    notes: tuple[str, ...]


# --------------------------------------------------------------------------- entry points


def new_from_edit(directory: Path, patch_id: str, vendor: Path, original: Path, edited: Path, *,
                  scope: str | None = None, target: str | None = None,
                  today: datetime.date | None = None) -> FromEdit:
    """Learn patch ID from ORIGINAL -> EDITED (a file of VENDOR), check it, and write it inactive."""
    check_id(patch_id)
    open_series(directory)
    original_bytes, edited_bytes = _read_file(original, "ORIGINAL"), _read_file(edited, "EDITED")
    shipped, target_name, notes = _locate(vendor, original, original_bytes, target)
    learned = learn_patch(patch_id, original_bytes, edited_bytes, target=target_name, shipped=shipped,
                          original_name=str(original), edited_name=str(edited), scope=scope,
                          directory=directory, today=today)
    paths = write_inactive(directory, [(learned.patch_id, learned.text)])
    return FromEdit((learned,), paths, directory / SERIES, tuple(notes))


def new_from_edit_tree(directory: Path, patch_id: str, vendor: Path, edited_tree: Path, *,
                       scope: str | None = None, today: datetime.date | None = None) -> FromEdit:
    """Learn a patch from every shipped ``.py`` file EDITED_TREE changed against VENDOR; write them all or none.

    A patch has one target: one changed file gives patch ID, several give
    ``ID-<file>`` each.
    """
    from ..checks.inputs import open_tree
    from ..shipping import plan_shipping

    check_id(patch_id)
    open_series(directory)
    with open_tree(vendor) as tree:
        plan = plan_shipping(tree)
        vendor_files = {f.path: tree.read(f.path) for f in tree.files() if f.path.endswith(".py")}
    shipped_py = sorted(p for p in vendor_files if plan.ships(p))
    with open_tree(edited_tree) as tree:
        edited_files = {f.path: tree.read(f.path) for f in tree.files() if f.path.endswith(".py")}
    notes: list[str] = []
    changed = [p for p in shipped_py if p in edited_files and edited_files[p] != vendor_files[p]]
    missing = [p for p in shipped_py if p not in edited_files]
    if missing:
        raise EditRefused(f"{missing[0]} is gone from the edited tree; a patch rewrites code, it cannot remove a file",
                          where=str(edited_tree), hint=f"put {missing[0]} back, as VENDOR has it")
    added = sorted(p for p in edited_files if p not in vendor_files)
    if added:
        raise EditRefused(f"{added[0]} is new in the edited tree; a patch rewrites code, it cannot add a file",
                          where=str(edited_tree), hint="move the new code into a file the image already ships")
    unshipped = sorted(p for p in vendor_files if not plan.ships(p) and p in edited_files
                       and edited_files[p] != vendor_files[p])
    for path in unshipped:
        notes.append(f"{path} changed, but the image does not ship it: the edit there is left out"
                     + _ships_instead(plan, path))
    if not changed:
        raise EditRefused("no file the image ships changed" + (f" (only {', '.join(unshipped)}, which never ships)"
                                                              if unshipped else ""),
                          where=str(edited_tree),
                          hint="edit the shipped copy"
                               + (f" ({_shipped_twin(plan, unshipped[0])})" if unshipped and _shipped_twin(plan, unshipped[0]) else "")
                               + ", then run this again")
    learned: list[LearnedPatch] = []
    for path in changed:
        name = _target_name(plan, path)
        one_id = patch_id if len(changed) == 1 else f"{patch_id}-{_slug(path)}"
        check_id(one_id)
        learned.append(learn_patch(one_id, vendor_files[path], edited_files[path], target=name, shipped=path,
                                   original_name=f"{vendor}:{path}", edited_name=f"{edited_tree}:{path}",
                                   scope=scope, directory=directory, today=today))
    paths = write_inactive(directory, [(p.patch_id, p.text) for p in learned])
    return FromEdit(tuple(learned), paths, directory / SERIES, tuple(notes))


# --------------------------------------------------------------------------- learning


def learn_patch(patch_id: str, original: bytes, edited: bytes, *, target: str, shipped: str,
                original_name: str = "ORIGINAL", edited_name: str = "EDITED", scope: str | None = None,
                directory: Path | None = None, today: datetime.date | None = None) -> LearnedPatch:
    """Learn the patch that turns ORIGINAL into EDITED, and check it as ``patcher test`` would; raise EditRefused."""
    try:
        return _learn(patch_id, original, edited, target=target, shipped=shipped, original_name=original_name,
                      edited_name=edited_name, scope=scope, directory=directory, today=today)
    finally:
        forget_code()


def _learn(patch_id: str, original: bytes, edited: bytes, *, target: str, shipped: str, original_name: str,
           edited_name: str, scope: str | None, directory: Path | None, today: datetime.date | None) -> LearnedPatch:
    codegen = Codegen()
    old = _parse(original, original_name, codegen)
    new = _parse(edited, edited_name, codegen)
    _check_alike(old, new, original_name, edited_name)
    if original == edited:
        raise EditRefused("it is the same as ORIGINAL: there is no edit to learn", where=edited_name,
                          hint="edit the file first, then run this again")
    try:
        changes = find_changes(old, new)
    except EditNotExpressible as error:
        raise EditRefused(f"{error}: patterns match statements, so no step can say it", where=edited_name,
                          hint="leave the comments outside classes and functions as they were") from None
    if codegen.code(substitute(old, changes)) != codegen.code(new):  # what find_changes saw must be the whole edit
        raise EditRefused("the edit changes layout outside any statement (the final newline, or comments "
                          "between blocks): no step can say it", where=edited_name,
                          hint="keep that layout as ORIGINAL has it")
    original_lines, edited_lines = Lines(old, codegen), Lines(new, codegen)
    if all(_layout_only(c) for c in changes):
        place = describe_change(changes[0], original_lines, edited_lines, original_name, edited_name)
        raise EditRefused(f"the edit {place} changes only comments, blank lines or layout: patterns match on "
                          "syntax, so no marker could tell a patched file from the vendor's", where=original_name,
                          hint="a patch needs a change to the code itself; keep such notes in the patch's description")
    try:
        steps = learn_steps(old, new, changes, scope, codegen)
    except ChangeRefused as refused:
        place = describe_change(refused.change, original_lines, edited_lines, original_name, edited_name)
        inside = refused.scope or "the module"
        by_hand = (f"write that step by hand: 'patcher new {patch_id} --target {target} --scope "
                   f"{inside if refused.scope else 'CLASS.METHOD'}' starts the patch")
        hint = refused.hint if refused.hint and not refused.hint.endswith(", or") else \
            f"{refused.hint} {by_hand}" if refused.hint else by_hand
        raise EditRefused(f"cannot turn the edit {place}, in {inside}, into a step: {refused.why}; "
                          "nothing written", where=original_name, hint=hint) from None
    indent = new.default_indent
    markers = find_markers(steps, old, new, indent)
    if not markers:
        place = describe_change(steps[0].changes[0], original_lines, edited_lines, original_name, edited_name)
        raise EditRefused(f"the edit {place} leaves no statement that is new and as frequent as the step "
                          "writes it, so re-applying could not tell the patch is there", where=original_name,
                          hint="add a statement of its own to the edit (a distinct assignment), or write the patch "
                               f"by hand with 'patcher new {patch_id} --target {target} --scope {steps[0].scope or 'CLASS.METHOD'}'")
    requires = find_requires(steps, old)
    places = tuple(describe_change(s.changes[0], original_lines, edited_lines, original_name, edited_name)
                   + (f" and {len(s.changes) - 1} more" if len(s.changes) > 1 else "") for s in steps)
    patch_scope = _patch_scope(steps)
    header = _header(patch_id, target, patch_scope, shipped, original_name, edited_name, places, steps,
                     today or datetime.date.today())
    body = _body(steps, markers, requires, patch_scope)
    by_hand = f"write this patch by hand with 'patcher new {patch_id} --target {target} --scope " \
              f"{patch_scope or 'CLASS.METHOD'}'"
    problem: str | None = None
    for before, after in _examples(old, new, steps):
        text = header + body + _example_toml(before, after)
        problem = _check_patch(text, patch_id, directory, original, edited, shipped)
        if problem is None:
            return LearnedPatch(patch_id, target, shipped, text, tuple(steps), places, tuple(markers),
                                tuple(requires))
        if problem.startswith("!"):
            raise EditRefused(f"the patch learned from the edit does not reproduce it: {problem[1:]}",
                              where=edited_name, hint=by_hand)
    raise EditRefused(f"the patch learned from the edit fails {problem}", where=edited_name, hint=by_hand)


def _parse(data: bytes, name: str, codegen: Codegen) -> cst.Module:
    deep = parse_problem(data)  # before libcst, whose parser crashes on deep nesting
    if deep is not None:
        raise EditRefused(f"cannot be parsed: {deep}", where=name, hint=HINT)
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as error:
        from ..transforms.pattern import describe_syntax_error

        raise EditRefused(f"does not parse: {describe_syntax_error(error)}", where=name,
                          hint="fix the syntax error, then run this again") from None
    except (SyntaxError, UnicodeDecodeError) as error:
        raise EditRefused(f"cannot be decoded ({error})", where=name,
                          hint="save it as UTF-8, or declare its encoding with a coding line") from None
    if codegen.code(module).encode(module.encoding) != data:
        raise EditRefused("does not round-trip byte for byte (lone CR line endings?)", where=name,
                          hint="convert it to LF or CRLF line endings first")
    return module


def _check_alike(old: cst.Module, new: cst.Module, original_name: str, edited_name: str) -> None:
    """Refuse an edit that changed the file's encoding or line endings: a patch keeps those as the drop has them."""
    def ending(module: cst.Module) -> str:
        return "CRLF" if module.default_newline == "\r\n" else "LF" if module.default_newline == "\n" else "CR"

    if ending(old) != ending(new):
        raise EditRefused(f"has {ending(new)} line endings and {original_name} {ending(old)}: a patch keeps the "
                          "vendor file's line endings, so the edit cannot be compared line by line", where=edited_name,
                          hint=f"convert {edited_name} back to {ending(old)} line endings (your editor's setting), "
                               "then run this again")
    if old.encoding != new.encoding:
        raise EditRefused(f"is encoded as {new.encoding}, {original_name} as {old.encoding}", where=edited_name,
                          hint=f"save it as {old.encoding}, then run this again")
    if old.has_trailing_newline != new.has_trailing_newline:
        said = "ends without a final newline" if not new.has_trailing_newline else "ends with a final newline"
        raise EditRefused(f"{said} and {original_name} does not: a patch keeps the file's last line as it is",
                          where=edited_name, hint=f"make its end as {original_name}'s, then run this again")


def _layout_only(change: Any) -> bool:
    from ..transforms.pattern import same_code

    return len(change.removed) == len(change.added) and all(
        same_code(a, b) for a, b in zip(change.removed, change.added))


def _patch_scope(steps: Sequence[Step]) -> str:
    """The scope most steps use (ties: the innermost), so the fewest steps name their own.

    The module, when a step is at module level: a step's empty scope reads
    as the patch's own, so only the patch's scope can name the module.
    """
    counts: dict[str, int] = {}
    for step in steps:
        counts[step.scope] = counts.get(step.scope, 0) + 1
    if "" in counts:
        return ""
    return max(counts, key=lambda s: (counts[s], s.count("."), -list(counts).index(s)))


# --------------------------------------------------------------------------- checking


def _check_patch(text: str, patch_id: str, directory: Path | None, original: bytes, edited: bytes,
                 shipped: str) -> str | None:
    """Load TEXT as the series loader would and run it; None when it reproduces EDITED and passes its examples.

    A problem with the patch itself starts with '!'; a failing example does not.
    """
    from ..patchset.runner import Status, patch_source
    from .cases import patch_cases, run_case

    with tempfile.TemporaryDirectory(prefix="patcher-from-edit-") as scratch:
        path = Path(scratch) / f"{patch_id}.toml"
        path.write_text(text, encoding="utf-8")
        try:
            _, data = read_patch_file(path)
            folder = PatchFolder.open(directory, templates_dir_for(directory)) if directory is not None else \
                PatchFolder.open(Path(scratch))
            patch = build_patch(path, data, LazyEnvironment(folder), {}, "")
            patch.code.built  # noqa: B018 - builds it, raising what is wrong with it now
        except PatchSetError as error:
            return f"!it does not load: {error}"
        result = patch_source(shipped, original, [patch])
        if result.failed or result.patched != edited:
            said = result.parse_error or (result.outcomes[0].message if result.outcomes else "")
            return f"!applied to ORIGINAL it gives other bytes than EDITED{': ' + said if said else ''}"
        again = patch_source(shipped, edited, [patch])
        if again.outcomes[0].status is not Status.ALREADY_APPLIED:
            return f"!on EDITED it does not report 'already applied' ({again.outcomes[0].message or 'it applies again'})"
        for case in patch_cases(PatchSet(path.parent, (patch,)), [patch]):
            outcome = run_case(case)
            if not outcome.passed:
                return f"its example fails ({case.label}: {outcome.message})"
    return None


# --------------------------------------------------------------------------- examples


def _examples(old: cst.Module, new: cst.Module, steps: Sequence[Step]) -> Iterable[tuple[str, str]]:
    """Before and after texts, smallest first: the scopes alone, then their whole top-level statements, then the files."""
    keep: set[str] = set()
    for step in steps:
        if not step.scope:
            break
        parts = step.scope.split(".")
        keep.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        for statement in [*step.covered, *(s for c in step.changes for s in (*c.removed, *c.added))]:
            if type(statement) in _DEFINITIONS:
                keep.add(f"{step.scope}.{statement.name.value}")  # type: ignore[attr-defined]
    else:
        yield _lf(_trimmed(old, keep, deep=True)), _lf(_trimmed(new, keep, deep=True))
        yield _lf(_trimmed(old, keep, deep=False)), _lf(_trimmed(new, keep, deep=False))
    yield _lf(old.code), _lf(new.code)


def _trimmed(module: cst.Module, keep: set[str], deep: bool) -> str:
    """The module with only the classes and functions KEEP names (and, in a kept class, its other statements)."""
    def members(body: Sequence[cst.BaseStatement], prefix: str, top: bool) -> list[cst.BaseStatement]:
        kept = []
        for statement in body:
            if type(statement) not in _DEFINITIONS:
                if not top:
                    kept.append(statement)
                continue
            name = f"{prefix}{statement.name.value}"  # type: ignore[attr-defined]
            if name not in keep:
                continue
            if deep and type(statement) is cst.ClassDef and type(statement.body) is cst.IndentedBlock:
                inner = members(list(statement.body.body), name + ".", top=False)
                if inner:  # no blank line between the class line and what is left of its body
                    lines = list(inner[0].leading_lines)  # type: ignore[attr-defined]
                    while lines and lines[0].comment is None:
                        lines.pop(0)
                    inner[0] = inner[0].with_changes(leading_lines=lines)
                statement = statement.with_changes(body=statement.body.with_changes(body=inner))
            kept.append(statement)
        return kept

    kept = members(list(module.body), "", top=True)
    if kept:
        kept[0] = kept[0].with_changes(leading_lines=[])
    return module.with_changes(header=[], body=kept, footer=[]).code


def _lf(code: str) -> str:
    return code.replace("\r\n", "\n")


# --------------------------------------------------------------------------- TOML


def _header(patch_id: str, target: str, scope: str, shipped: str, original_name: str, edited_name: str,
            places: Sequence[str], steps: Sequence[Step], today: datetime.date) -> str:
    where = ", ".join(dict.fromkeys(s.scope or "the module" for s in steps))
    lines = "\n".join(f"- step {n}: {step.words}, {place}" for n, (step, place) in enumerate(zip(steps, places), 1))
    description = (f"Hand edit of {where}, learned by patcher new --from-edit\n\n"
                   f"Learned from {_plain(original_name)} (the vendor's {shipped}) and {_plain(edited_name)}; "
                   "applied to the first, this patch gives the second byte for byte.\n"
                   f"{lines}\n\n"
                   "Say here why the vendor code needs this change, and why the patched code behaves the same "
                   "wherever it must.\n")
    return (f"# Patch {patch_id}, learned by 'patcher new --from-edit' on {today.isoformat()}. Say why in the\n"
            f"# description, run 'patcher test --activate {patch_id}' (it lists the patch in the series\n"
            "# once its cases pass), then 'patcher diff VENDOR' to see it on a drop.\n\n"
            f"id = {_basic(patch_id)}\n"
            f"description = {_multiline(description)}\n"
            f"origin = {_basic('other, a hand edit learned by patcher new --from-edit')}\n"
            f"last-update = {_basic(today.isoformat())}\n"
            f"target = {_basic(target)}  # where the image runs it\n"
            f"scope = {_basic(scope)}\n")


def _body(steps: Sequence[Step], markers: Sequence[Marker], requires: Sequence[Marker], scope: str) -> str:
    out = ["", "# Code the edit added, once each: when all of it is there, the patch is already applied.",
           "applied-when = [", *(f"    {_marker(m, scope)}," for m in markers), "]"]
    if requires:
        out += ["# Code the added code reads from the vendor's: without it the patch does not apply.",
                "requires = [", *(f"    {_marker(m, scope)}," for m in requires), "]"]
    for step in steps:
        out += ["", "[[steps]]"]
        for key, value in step.table(scope).items():
            if key in ("pattern", "before", "after", "code"):
                out.append(f"{key} = {_multiline(_escape_jinja(value))}")
            elif isinstance(value, int):
                out.append(f"{key} = {value}")
            else:
                out.append(f"{key} = {_basic(value)}")
    return "\n".join(out) + "\n"


def _example_toml(before: str, after: str) -> str:
    return ("\n# The scope as the vendor wrote it, and as the hand edit left it: 'patcher test' runs it.\n"
            "[[examples]]\n"
            f"name = {_basic('the hand edit')}\n"
            f"before = {_multiline(before)}\n"
            f"after = {_multiline(after)}\n")


def _marker(marker: Marker, scope: str) -> str:
    text = _escape_jinja(marker.pattern.strip("\n"))
    pattern = _multiline(text + "\n") if "\n" in text else _basic(text)
    if marker.scope == scope:
        return pattern
    return f"{{ scope = {_basic(marker.scope)}, pattern = {pattern} }}"


def _escape_jinja(text: str) -> str:
    """Keep code that holds '{{', '{%' or '{#' as it is through the Jinja rendering every pattern and code gets."""
    return re.sub(r"\{(?=[{%#])", "{{ '{' }}", text)


# What a literal string may hold: no control character but tab and LF (a CR among them: TOML reads CRLF as LF).
_LITERAL_SAFE = re.compile(r"[^\x00-\x08\x0b-\x1f\x7f]*")


def _multiline(text: str) -> str:
    """A TOML string for a block of code: a literal ''' string when it can hold it, else an escaped one.

    Up to two quotes may end a literal string's text (TOML reads them before the closing three).
    """
    if "'''" not in text and _LITERAL_SAFE.fullmatch(text):
        return "'''\n" + text + "'''"
    return _basic(text)


def _basic(text: str) -> str:
    # JSON's string escapes are TOML's basic-string escapes; TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _plain(name: str) -> str:
    return shown(name)


# --------------------------------------------------------------------------- the drop


def _read_file(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise PatcherError(f"{what}: no such file" if not path.exists() else f"{what}: not a regular file",
                           where=str(path), hint="give the vendor file as you copied it and your edited copy")
    try:
        return path.read_bytes()
    except OSError as error:
        raise PatcherError(f"cannot read {what}: {error.strerror}", where=str(path)) from None


def _locate(vendor: Path, original: Path, data: bytes, target: str | None) -> tuple[str, str, list[str]]:
    """Find the shipped file of VENDOR that ORIGINAL is a copy of: (its path in the drop, its target name, notes)."""
    from ..checks.inputs import open_tree
    from ..shipping import plan_shipping

    notes: list[str] = []
    with open_tree(vendor) as tree:
        plan = plan_shipping(tree)
        if target is not None:
            try:
                shipped = plan.shipped_copy(target)
            except ShippingError as error:
                raise PatcherError(f"--target {target}: {error.message}", where=str(vendor), hint=error.hint_template, command=error.command) from None
            if tree.read(shipped) != data:
                notes.append(f"{original} is not byte for byte VENDOR's {shipped}: the patch was checked on {original}")
            return shipped, target, notes
        same = [f.path for f in tree.files() if f.path.endswith(".py") and f.size == len(data)
                and tree.read(f.path) == data]
        shipped_same = [p for p in same if plan.ships(p)]
        if len(shipped_same) > 1:
            raise PatcherError(f"{len(shipped_same)} shipped files have ORIGINAL's bytes: {', '.join(shipped_same)}",
                               where=str(original), hint="say which with --target PATH (its path in the image)")
        if shipped_same:
            return shipped_same[0], _target_name(plan, shipped_same[0]), notes
        if same:
            twin = _shipped_twin(plan, same[0])
            raise PatcherError(f"ORIGINAL is {same[0]} of {vendor}, which the image never ships"
                               + (f"; it ships {twin}" if twin else ""), where=str(original),
                               hint=f"edit a copy of {twin} instead: edits to {same[0]} never reach the image"
                               if twin else "edit a copy of a file the Dockerfile ships")
        normalised = data.replace(b"\r\n", b"\n")
        for item in tree.files():
            if item.path.endswith(".py") and plan.ships(item.path) and \
                    tree.read(item.path).replace(b"\r\n", b"\n") == normalised:
                raise PatcherError(f"ORIGINAL matches {item.path} of {vendor} only with its line endings changed",
                                   where=str(original),
                                   hint=f"copy {item.path} out of the drop again without converting its line "
                                        "endings, and redo the edit there")
    raise PatcherError(f"no file of {vendor} has ORIGINAL's bytes", where=str(original),
                       hint="copy the file out of that drop unchanged, or say which file it is with --target PATH")


def _target_name(plan: Any, path: str) -> str:
    """Name PATH as patches name targets: its path in the image below site-/dist-packages, else its image path."""
    images = [i.image_path for i in plan.installed if i.path == path]
    if path in plan.copied:
        images.append(plan.copied[path])
    names = []
    for image in images:
        for folder in ("/site-packages/", "/dist-packages/"):
            if folder in image:
                names.append(image.rsplit(folder, 1)[1])
    names += [image.lstrip("/") for image in images]
    for name in names:
        try:
            if plan.shipped_copy(name) == path:
                return name
        except ShippingError:
            continue
    raise PatcherError(f"cannot name {path} as a target: no path in the image leads to it alone",
                       hint="say which with --target PATH (its path in the image)")


def _shipped_twin(plan: Any, path: str) -> str:
    """The shipped file with the same name as PATH, if any (the copy an edit of PATH was meant for)."""
    name = PurePosixPath(path).name
    twins = sorted(p for p in plan.copied if PurePosixPath(p).name == name)
    return twins[0] if twins else ""


def _ships_instead(plan: Any, path: str) -> str:
    twin = _shipped_twin(plan, path)
    return f" (the image ships {twin})" if twin else ""


def _slug(path: str) -> str:
    stem = PurePosixPath(path).stem.lower()
    return re.sub(r"[^a-z0-9]+", "-", stem).strip("-") or "file"


# --------------------------------------------------------------------------- writing


def write_inactive(directory: Path, patches: Sequence[tuple[str, str]]) -> tuple[Path, ...]:
    """Write each ``(id, toml)`` as ``ID.toml``, listed inactive in ``series``; all or nothing.

    Each goes through ``new.add_inactive_patch``, the one way a patch is
    added (created exclusively, the series rewritten in one step with its
    mode and line endings kept). If one is refused, those added before it
    are removed and the series is put back as it was.
    """
    from .new import add_inactive_patch
    from .series_file import write_series

    open_series(directory)
    series = directory / SERIES
    before = series.read_text(encoding="utf-8", errors="surrogateescape")
    added: list[Path] = []
    try:
        for patch_id, toml in patches:
            added.append(add_inactive_patch(directory, patch_id, toml).path)
    except BaseException:
        for path in added:
            with contextlib.suppress(OSError):
                path.unlink()
        if added:
            write_series(series, before)
        raise
    return tuple(added)


__all__ = ["EditRefused", "FromEdit", "LearnedPatch", "learn_patch", "new_from_edit", "new_from_edit_tree",
           "write_inactive"]
