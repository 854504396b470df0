"""Show a DiffReport: unified diff (bytes, for ``patch -p1``), stat, JSON, or Markdown for a pull request."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..patchset.model import Patch
from ..resources import tool_templates_dir
from .changes import DiffReport, FileDiff, Section
from .textdiff import FileChange, split_lines

if TYPE_CHECKING:
    from ..checks import CheckResult
    from ..pipeline import Build
    from ..report import Failure

MARKDOWN_TEMPLATE = "diff.md.j2"
STAT_WIDTH = 50


def unified(report: DiffReport) -> bytes:
    """The whole diff; ``#`` lines (ignored by ``patch`` and ``git apply``) say which patches made each file."""
    out: list[bytes] = []
    if report.base is not None:
        out.append(_comment(f"patch set at {report.base.ref} ({report.base.commit[:12]}) -> working tree"))
    for section, title in zip(report.sections, titles(report)):
        if title is not None:
            out.append(_comment(f"==== {title}"))
            if not section.files:
                out.append(_comment("(no change)"))
        for item in section.files:
            out.extend(_comment(line) for line in annotation(item))
            out.append(item.unified())
    return b"".join(out)


def annotation(item: FileDiff) -> list[str]:
    """The lines that say why a file changed: its path, then each patch with its one-line description."""
    head = item.path if item.mirror_of is None else f"{item.path}: mirror of {item.mirror_of}, made identical to it"
    width = max((len(p.id) for p in item.patches), default=0)
    return [head, *(f"  {p.id:<{width}}  {p.summary}" for p in item.patches)]


def titles(report: DiffReport) -> list[str | None]:
    """Each section's heading under ``--per-patch`` ("[2/3] id (status): summary"), else None."""
    if not report.per_patch:
        return [None for _ in report.sections]
    total = sum(1 for s in report.sections if s.patch is not None)
    out: list[str | None] = []
    number = 0
    for section in report.sections:
        if section.patch is None:
            out.append(section.title or "")
            continue
        number += 1
        out.append(f"[{number}/{total}] {section.patch.id} ({section.status}): {section.patch.summary}")
    return out


def _comment(text: str) -> bytes:
    return ("# " + " ".join(text.splitlines()) + "\n").encode("utf-8")


def stat(report: DiffReport) -> str:
    """A ``git diff --stat`` style summary, per section with ``--per-patch``."""
    lines: list[str] = []
    for section, title in zip(report.sections, titles(report)):
        if title is not None:
            lines.append(f"# {title}")
        lines.extend(_stat_rows(section.files))
    files, added, removed = report.stat()
    lines.append(f" {files} file{'s' if files != 1 else ''} changed, "
                 f"{added} insertion{'s' if added != 1 else ''}(+), {removed} deletion{'s' if removed != 1 else ''}(-)")
    return "\n".join(lines) + "\n"


def _stat_rows(files: tuple[FileDiff, ...]) -> list[str]:
    counts = [item.change.counts() for item in files]
    width = max((len(item.path) for item in files), default=0)
    largest = max((a + r for a, r in counts), default=0)
    digits = len(str(largest))
    rows = []
    for item, (added, removed) in zip(files, counts):
        if item.change.binary:
            rows.append(f" {item.path:<{width}} | Bin")
            continue
        total = added + removed
        scale = min(1.0, STAT_WIDTH / largest) if largest else 1.0
        plus, minus = round(added * scale), round(removed * scale)
        if added and not plus:
            plus = 1
        if removed and not minus:
            minus = 1
        rows.append(f" {item.path:<{width}} | {total:>{digits}} {'+' * plus}{'-' * minus}")
    return rows


def to_json(report: DiffReport, diffs: bool = True) -> dict[str, Any]:
    """The report as plain data; diffs are text (undecodable bytes replaced), left out unless ``diffs``."""
    files, added, removed = report.stat()
    return {
        "input": report.input_name,
        "patch_set_commit": report.commit,
        "base": None if report.base is None else {"ref": report.base.ref, "commit": report.base.commit},
        "per_patch": report.per_patch,
        "sections": [_section_json(s, diffs) for s in report.sections],
        "stat": {"files": files, "insertions": added, "deletions": removed},
        "empty": report.empty,
    }


def _section_json(section: Section, diffs: bool) -> dict[str, Any]:
    return {
        "patch": None if section.patch is None else _patch_json(section.patch),
        "status": section.status,
        "title": section.title,
        "files": [_file_json(item, diffs) for item in section.files],
    }


def _file_json(item: FileDiff, diffs: bool) -> dict[str, Any]:
    added, removed = item.change.counts()
    return {
        "path": item.path,
        "mirror_of": item.mirror_of,
        "patches": [_patch_json(p) for p in item.patches],
        "insertions": added,
        "deletions": removed,
        "binary": item.change.binary,
        "diff": item.unified().decode("utf-8", "replace") if diffs else None,
    }


def _patch_json(patch: Patch) -> dict[str, str]:
    return {"id": patch.id, "summary": patch.summary}


@dataclass(frozen=True)
class SummaryRow:
    """One patch in the Markdown summary: its status, the files it changes and the lines it adds and removes."""

    patch: Patch
    status: str  # "applied", "already applied" or "failed"
    files: tuple[str, ...]  # the shipped file it changes (none when it changed nothing)
    mirrors: int  # stale copies made identical to that file
    added: int
    removed: int


def summary_rows(build: "Build", report: DiffReport) -> tuple[SummaryRow, ...]:
    """Say what each patch of the series did to the drop, in series order.

    A patch's lines are those of its own step (as ``--per-patch`` shows
    it): from the report's sections under ``--per-patch``, from the file's
    diff when one patch alone changed the file, and otherwise from
    replaying the series one patch at a time (``series.replay``).
    """
    statuses = {o.patch.id: o.status.value for f in build.files for o in f.outcomes}
    mirrors = {path: sum(1 for m in build.mirrors if m.shipped == path) for path in build.targets.values()}
    counts: dict[str, tuple[int, int]] = {}
    if report.per_patch:
        for section in report.sections:
            if section.patch is not None:
                counts[section.patch.id] = _summed(section.files)
    else:
        shared = [f for f in build.files if sum(1 for o in f.outcomes if o.status.value == "applied") > 1]
        if shared:
            from .series import replay

            for step in replay(build):
                if step.changed:
                    counts[step.patch.id] = FileChange(step.path, step.before, step.after).counts()
        for item in _diffed_targets(build):
            if len(item.patches) == 1:
                counts.setdefault(item.patches[0].id, item.change.counts())
    rows = []
    for patch in build.patch_set.patches:
        path = build.targets.get(patch.target)
        status = statuses.get(patch.id, "failed")  # no outcome: its file did not parse
        added, removed = counts.get(patch.id, (0, 0))
        changed = status == "applied" and path is not None and (added or removed)
        rows.append(SummaryRow(patch, status, (path,) if changed and path else (),
                               mirrors.get(path or "", 0) if changed else 0, added, removed))
    return tuple(rows)


def _diffed_targets(build: "Build") -> list[FileDiff]:
    from .changes import apply_diff

    shipped = set(build.targets.values())
    return [item for item in apply_diff(build, "").files if item.path in shipped]


def _summed(files: tuple[FileDiff, ...]) -> tuple[int, int]:
    added = removed = 0
    for item in files:
        plus, minus = item.change.counts()
        added, removed = added + plus, removed + minus
    return added, removed


def markdown(report: DiffReport, diffs: bool = True, rows: tuple[SummaryRow, ...] = (),
             failures: "Sequence[Failure]" = (), rules: "CheckResult | None" = None) -> str:
    """The report as a pull-request comment, from ``templates/diff.md.j2``; ``diffs`` False keeps the summary.

    It opens with a summary table (patch, status, files, lines) and the
    patches that do not apply with the code closest to them, then the
    safety-rule errors of the input, then the diffs: a reviewer sees what
    failed before scrolling.
    """
    files, added, removed = report.stat()
    sections = []
    for section, title in zip(report.sections, titles(report)):
        sections.append({
            "title": title,
            "files": [_markdown_file(item, diffs) for item in section.files],
        })
    patches = _unique_patches(report)
    values = {
        "input": report.input_name,
        "commit": report.commit,
        "base": None if report.base is None else {"ref": report.base.ref, "commit": report.base.commit},
        "per_patch": report.per_patch,
        "patches": [{"id": p.id, "summary": _cell(p.summary)} for p in patches],
        "rows": [{"id": r.patch.id, "summary": _cell(r.patch.summary), "status": r.status, "files": list(r.files),
                  "mirrors": r.mirrors, "insertions": r.added, "deletions": r.removed} for r in rows],
        "failures": [{"path": f.path, "patch": f.patch, "detail": f.detail,
                      "closest": "" if f.diagnostic is None else f.diagnostic.describe()} for f in failures],
        "rule_errors": [] if rules is None else [
            {"path": v.path, "line": v.line, "rule": v.rule, "message": v.message} for v in rules.errors],
        "sections": sections,
        "stat": {"files": files, "insertions": added, "deletions": removed},
    }
    from ..patchset.templates import make_environment, render  # Jinja2 loads for markdown only

    # Each file's block ends with a blank line that parts it from the next; the document ends with one newline.
    return render(make_environment(tool_templates_dir()), name=MARKDOWN_TEMPLATE, values=values).rstrip("\n") + "\n"


def _markdown_file(item: FileDiff, diffs: bool) -> dict[str, Any]:
    added, removed = item.change.counts()
    text = item.unified().decode("utf-8", "replace")
    crlf = "\r\n" in text
    # A pull-request comment shows CRs as nothing at all; say so once instead.
    text = text.replace("\r\n", "\n")
    return {
        "path": item.path,
        "mirror_of": item.mirror_of,
        "patches": [{"id": p.id, "summary": p.summary} for p in item.patches],
        "insertions": added,
        "deletions": removed,
        "crlf": crlf,
        "fence": fence(text),
        "diff": text if diffs else None,
    }


def fence(text: str) -> str:
    """A code fence that no line of ``text`` closes: longer than any backtick run opening a line.

    CommonMark closes a fence at a line of as many backticks or more
    indented up to three spaces, so a diff's context line `` ```` `` (a
    vendor docstring's own fence) counts too.
    """
    longest = max((len(run) for run in re.findall(r"^ {0,3}(`+)", text, flags=re.M)), default=0)
    return "`" * max(3, longest + 1)


def _unique_patches(report: DiffReport) -> list[Patch]:
    seen: dict[str, Patch] = {}
    for item in report.files:
        for patch in item.patches:
            seen.setdefault(patch.id, patch)
    for section in report.sections:
        if section.patch is not None:
            seen.setdefault(section.patch.id, section.patch)
    return list(seen.values())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


_COLOURS = {"+": b"\x1b[32m", "-": b"\x1b[31m", "@": b"\x1b[36m", "#": b"\x1b[33m", "header": b"\x1b[1m"}
_RESET = b"\x1b[m"
_HEADERS = (b"diff --git ", b"--- ", b"+++ ", b"new file mode", b"deleted file mode", b"old mode", b"new mode",
            b"Binary files ")


def colour(data: bytes) -> bytes:
    """Colour a unified diff for a terminal: additions green, deletions red, hunks cyan, notes yellow."""
    out = []
    for line in split_lines(data):
        body = line.rstrip(b"\n")
        end = line[len(body):]
        if body.startswith(_HEADERS):
            code = _COLOURS["header"]
        elif body[:1] in (b"+", b"-", b"@", b"#"):
            code = _COLOURS[body[:1].decode()]
        else:
            out.append(line)
            continue
        out.append(code + body + _RESET + end)
    return b"".join(out)
