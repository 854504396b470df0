"""Show a DiffReport: unified diff (bytes, for ``patch -p1``), stat, JSON, or Markdown for a pull request."""

from __future__ import annotations

import re
from typing import Any

from ..patchset.model import Patch
from ..resources import tool_templates_dir
from .changes import DiffReport, FileDiff, Section
from .textdiff import split_lines

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


def markdown(report: DiffReport, diffs: bool = True) -> str:
    """The report as a pull-request comment, from ``templates/diff.md.j2``; ``diffs`` False keeps the summary."""
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
        "sections": sections,
        "stat": {"files": files, "insertions": added, "deletions": removed},
    }
    from ..patchset.templates import make_environment, render  # Jinja2 loads for markdown only

    return render(make_environment(tool_templates_dir()), name=MARKDOWN_TEMPLATE, values=values)


def _markdown_file(item: FileDiff, diffs: bool) -> dict[str, Any]:
    added, removed = item.change.counts()
    text = item.unified().decode("utf-8", "replace")
    crlf = "\r\n" in text
    # A pull-request comment shows CRs as nothing at all; say so once instead.
    text = text.replace("\r\n", "\n")
    longest = max((len(m) for m in re.findall(r"^`{3,}", text, flags=re.M)), default=2)
    return {
        "path": item.path,
        "mirror_of": item.mirror_of,
        "patches": [{"id": p.id, "summary": p.summary} for p in item.patches],
        "insertions": added,
        "deletions": removed,
        "crlf": crlf,
        "fence": "`" * max(3, longest + 1),
        "diff": text if diffs else None,
    }


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
