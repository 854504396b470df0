"""Unified diffs over bytes that ``patch -p1`` and ``git apply`` take back exactly.

Lines are split on ``\\n`` only, so a CR before it stays part of the line
(CRLF files round-trip) and a lone CR inside a line is just a byte. A last
line without a newline gets the ``\\ No newline at end of file`` marker.
Headers follow git's: ``diff --git``, mode lines, ``---``/``+++`` with
``a/`` and ``b/`` (or ``/dev/null``), names C-quoted when they need it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..linediff import grouped, opcodes

NO_NEWLINE = b"\\ No newline at end of file\n"
CONTEXT = 3

_NEEDS_QUOTING = re.compile(rb'[\x00-\x1f"\\\x7f-\xff]')


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after; None where it does not exist."""

    path: str  # posix, relative to the context root
    before: bytes | None
    after: bytes | None
    executable_before: bool = False
    executable_after: bool = False

    @property
    def binary(self) -> bool:
        """Whether either side looks binary (a NUL byte early on), as git decides."""
        return any(data is not None and b"\0" in data[:8000] for data in (self.before, self.after))

    def counts(self) -> tuple[int, int]:
        """Lines added and removed."""
        if self.binary:
            return 0, 0
        added = removed = 0
        for tag, i1, i2, j1, j2 in opcodes(split_lines(self.before or b""), split_lines(self.after or b"")):
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
        return added, removed

    def unified(self, context: int = CONTEXT) -> bytes:
        """The git-style diff of this file (empty when nothing changed)."""
        if self.before == self.after and self.executable_before == self.executable_after:
            return b""
        return file_diff(self, context)


def split_lines(data: bytes) -> list[bytes]:
    """Split on ``\\n`` keeping it; the last line may lack one."""
    if not data:
        return []
    lines = data.split(b"\n")
    result = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def line_count(data: bytes) -> int:
    """Lines as an editor counts them: a last line without a newline counts too."""
    return len(split_lines(data))


def quote_path(path: str) -> bytes:
    """A path as git writes it in headers: C-quoted when it holds odd bytes."""
    raw = path.encode("utf-8", "surrogateescape")
    if not _NEEDS_QUOTING.search(raw):
        return raw
    out = bytearray(b'"')
    escapes = {ord("\n"): b"\\n", ord("\t"): b"\\t", ord('"'): b'\\"', ord("\\"): b"\\\\"}
    for byte in raw:
        if byte in escapes:
            out += escapes[byte]
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _name(prefix: bytes, path: str) -> bytes:
    quoted = quote_path(path)
    if quoted.startswith(b'"'):
        return b'"' + prefix + quoted[1:]
    # GNU patch reads a name up to a tab; git adds one after names with spaces.
    return prefix + quoted + (b"\t" if b" " in quoted else b"")


def file_diff(change: FileChange, context: int = CONTEXT, old_path: str | None = None) -> bytes:
    """Headers and hunks for one file; ``old_path`` names the a/ side when it differs."""
    old_name, new_name = old_path or change.path, change.path
    header = [b"diff --git " + _name(b"a/", old_name).rstrip(b"\t") + b" " + _name(b"b/", new_name).rstrip(b"\t") + b"\n"]
    mode_before = b"100755" if change.executable_before else b"100644"
    mode_after = b"100755" if change.executable_after else b"100644"
    if change.before is None:
        header.append(b"new file mode " + mode_after + b"\n")
    elif change.after is None:
        header.append(b"deleted file mode " + mode_before + b"\n")
    elif mode_before != mode_after:
        header += [b"old mode " + mode_before + b"\n", b"new mode " + mode_after + b"\n"]
    if change.before == change.after or (not change.before and not change.after):
        return b"".join(header)
    old_label = b"/dev/null" if change.before is None else _name(b"a/", old_name)
    new_label = b"/dev/null" if change.after is None else _name(b"b/", new_name)
    if change.binary:
        return b"".join(header) + b"Binary files " + old_label.rstrip(b"\t") + b" and " + new_label.rstrip(b"\t") + b" differ\n"
    header += [b"--- " + old_label + b"\n", b"+++ " + new_label + b"\n"]
    return b"".join(header) + hunks(change.before or b"", change.after or b"", context)


def hunks(before: bytes, after: bytes, context: int = CONTEXT) -> bytes:
    """The ``@@`` hunks turning ``before`` into ``after``."""
    old, new = split_lines(before), split_lines(after)
    out: list[bytes] = []
    for group in grouped(opcodes(old, new), context):
        first, last = group[0], group[-1]
        out.append(b"@@ -%s +%s @@\n" % (_range(first[1], last[2]), _range(first[3], last[4])))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_line(b" ", line) for line in old[i1:i2])
                continue
            out.extend(_line(b"-", line) for line in old[i1:i2])
            out.extend(_line(b"+", line) for line in new[j1:j2])
    return b"".join(out)


def _line(prefix: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return prefix + line
    return prefix + line + b"\n" + NO_NEWLINE


def _range(start: int, stop: int) -> bytes:
    # As diff -u writes it: "start,length", "start" alone for one line, and
    # the line before an empty range.
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    if length == 0:
        return b"%d,0" % start
    return b"%d,%d" % (start + 1, length)


def text_lines(text: str) -> list[str]:
    r"""Split text into lines as Python numbers them (``\n``, ``\r\n`` or a lone ``\r``), each with its end.

    Not ``str.splitlines``, which also breaks at form feeds, ``\x1c``-``\x1e``
    and U+2028: vendor code holding one would have its lines numbered past
    where ``ast`` puts them.
    """
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def numbered_diff(old: list[str], old_numbers: list[int], new: list[str], new_numbers: list[int],
                  old_label: str, new_label: str, context: int = CONTEXT) -> str:
    """A unified diff of two runs of lines, each hunk header in each side's own file numbering.

    ``old_numbers[i]`` is the line number ``old[i]`` has in its file (the
    same for ``new``), so a scope's code can be diffed alone and still read
    ``@@ -a,b +c,d @@`` with ``a`` a line of the old file and ``c`` one of the
    new. The runs may skip lines (a class shown without its methods' bodies):
    a hunk never spans a skipped line, so each header's count is of lines
    that follow each other in the file.
    """
    hunks: list[list[_Row]] = []
    for group in grouped(opcodes(old, new), context):  # difflib's answer, near-linear on large files
        rows: list[_Row] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(_Row(" ", i, j, i, j) for i, j in zip(range(i1, i2), range(j1, j2)))
                continue
            # A change across left-out lines is shown as one change per stretch of each side's file.
            removals, additions = _stretches(i1, i2, old_numbers), _stretches(j1, j2, new_numbers)
            for number in range(max(len(removals), len(additions))):
                removed = removals[number] if number < len(removals) else range(i2, i2)
                added = additions[number] if number < len(additions) else range(j2, j2)
                rows.extend(_Row("-", i, None, i, added.start) for i in removed)
                rows.extend(_Row("+", None, j, removed.stop, j) for j in added)
        hunks.extend(_contiguous(rows, old_numbers, new_numbers))
    if not hunks:
        return ""
    out = [f"--- {old_label}\n", f"+++ {new_label}\n"]
    for hunk in hunks:
        olds = [old_numbers[r.old] for r in hunk if r.old is not None]
        news = [new_numbers[r.new] for r in hunk if r.new is not None]
        out.append(f"@@ -{_numbered_range(olds, _before(hunk[0].old_at, old_numbers))} "
                   f"+{_numbered_range(news, _before(hunk[0].new_at, new_numbers))} @@\n")
        for row in hunk:
            line = old[row.old] if row.old is not None else new[row.new] if row.new is not None else ""
            out.append(row.prefix + line if line.endswith(("\n", "\r"))
                       else f"{row.prefix}{line}\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass(frozen=True)
class _Row:
    """One line of a hunk: its prefix, its index on each side (None where it is not there), and where it sits."""

    prefix: str
    old: int | None
    new: int | None
    old_at: int  # index in old of this line, or of the line it comes before
    new_at: int


def _contiguous(rows: list[_Row], old_numbers: list[int], new_numbers: list[int]) -> list[list[_Row]]:
    """Cut a hunk's rows wherever either side skips a line of its file."""
    runs: list[list[_Row]] = []
    last_old: int | None = None
    last_new: int | None = None
    for row in rows:
        gap = (row.old is not None and last_old is not None and old_numbers[row.old] != last_old + 1) or \
              (row.new is not None and last_new is not None and new_numbers[row.new] != last_new + 1)
        if not runs or gap:
            runs.append([])
            last_old = last_new = None  # a new hunk: each side starts where its first line is
        runs[-1].append(row)
        last_old = old_numbers[row.old] if row.old is not None else last_old
        last_new = new_numbers[row.new] if row.new is not None else last_new
    return runs


def _stretches(start: int, stop: int, numbers: list[int]) -> list[range]:
    """Split indexes ``start``-``stop`` where the file numbers skip lines."""
    stretches: list[range] = []
    first = start
    for index in range(start + 1, stop):
        if numbers[index] != numbers[index - 1] + 1:
            stretches.append(range(first, index))
            first = index
    if stop > start:
        stretches.append(range(first, stop))
    return stretches


def _before(index: int, numbers: list[int]) -> int:
    """The file line before the run's line ``index`` (what an empty range names), 0 at the top of the file."""
    if index > 0:
        return numbers[index - 1]
    return numbers[0] - 1 if numbers else 0


def _numbered_range(numbers: list[int], before: int) -> str:
    # As diff -u writes it: "start,length", "start" alone for one line, and the line before an empty range.
    if len(numbers) == 1:
        return f"{numbers[0]}"
    if not numbers:
        return f"{before},0"
    return f"{numbers[0]},{len(numbers)}"
