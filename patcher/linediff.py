"""Diff two sequences of lines in near-linear time, with difflib's own answer wherever the input is small.

``difflib.SequenceMatcher`` (with ``autojunk`` off, which every caller
needs: a line repeated all over a file must still be matched) looks for the
longest common block by visiting, for each line of one side, every place the
same line occurs on the other side, and does so again for each block it
finds. Blank lines, ``)``, ``else:`` and ``return out`` repeat thousands of
times in a large vendor file, so that is quadratic: a 1 MB target took
minutes. Here:

1. an input whose two sides multiply to at most ``SMALL`` lines goes to
   difflib whole: small files get exactly the opcodes they always got;
2. a larger one loses its common prefix and suffix first (an edit touches a
   few places of a large file), and the rest is cut at the lines that occur
   exactly once on each side, taken in the longest run that keeps their
   order on both (patience diff); each piece between two cuts is diffed
   again by these same rules;
3. a large piece where every line repeats on some side (pathological
   input) goes to difflib up to ``BOUNDED``, and beyond that to difflib one
   window of ``WINDOW`` lines at a time: a correct diff, if not always the
   shortest one.

Each level costs time linear in its piece (a dict of lines, and a sort of
the anchors), and pieces shrink fast, so a large file costs little more
than reading its lines twice.

The opcodes are difflib's: ``(tag, i1, i2, j1, j2)`` with tag ``equal``,
``replace``, ``delete`` or ``insert``, covering both sides in order, no two
neighbours with the same tag.
"""

from __future__ import annotations

import bisect
import difflib
from typing import Hashable, Iterator, Sequence

Opcode = tuple[str, int, int, int, int]

SMALL = 40_000  # len(a) * len(b) up to which difflib answers: 200 x 200 lines, a few ms
BOUNDED = 250_000  # a piece where no line is unique still goes to difflib up to this size: 500 x 500
WINDOW = 100  # beyond that, on windows of this many lines of each side


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """Return opcodes turning ``a`` into ``b``, as ``SequenceMatcher(None, a, b, autojunk=False)`` would."""
    if len(a) * len(b) <= SMALL:
        return _difflib(a, b, 0, len(a), 0, len(b))
    raw: list[Opcode] = []
    # Pieces still to diff, or opcodes already known, last first: an explicit
    # stack, since a long file cut at thousands of anchors must not recurse.
    stack: list[tuple[int, int, int, int] | list[Opcode]] = [(0, len(a), 0, len(b))]
    while stack:
        task = stack.pop()
        if isinstance(task, list):
            raw.extend(task)
        else:
            stack.extend(reversed(_cut(a, b, *task)))
    return _merged(raw)


def _cut(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int,
         bhi: int) -> list[tuple[int, int, int, int] | list[Opcode]]:
    """Diff ``a[alo:ahi]`` against ``b[blo:bhi]`` one level: known opcodes, and the pieces left, in order."""
    if (ahi - alo) * (bhi - blo) <= SMALL:
        return [_difflib(a, b, alo, ahi, blo, bhi)]
    start_a, start_b, end_a, end_b = alo, blo, ahi, bhi
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo += 1
        blo += 1
    while ahi > alo and bhi > blo and a[ahi - 1] == b[bhi - 1]:
        ahi -= 1
        bhi -= 1
    prefix: list[Opcode] = [("equal", start_a, alo, start_b, blo)]
    suffix: list[Opcode] = [("equal", ahi, end_a, bhi, end_b)]
    size = (ahi - alo) * (bhi - blo)
    if size <= SMALL:
        return [prefix, _difflib(a, b, alo, ahi, blo, bhi), suffix]
    anchors = _unique_anchors(a, b, alo, ahi, blo, bhi)
    if not anchors:
        # Every line of the piece repeats on some side (pathological input):
        # difflib, on the whole piece while that stays cheap.
        return [prefix, _windowed(a, b, alo, ahi, blo, bhi), suffix]
    tasks: list[tuple[int, int, int, int] | list[Opcode]] = [prefix]
    i, j = alo, blo
    for x, y in anchors:
        tasks += [(i, x, j, y), [("equal", x, x + 1, y, y + 1)]]
        i, j = x + 1, y + 1
    tasks += [(i, ahi, j, bhi), suffix]
    return tasks


def _unique_anchors(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int,
                    bhi: int) -> list[tuple[int, int]]:
    """Pairs (i, j) with ``a[i] == b[j]`` occurring once on each side, the longest run in order on both."""
    in_a: dict[Hashable, int] = {}
    for i in range(alo, ahi):
        line = a[i]
        in_a[line] = -1 if line in in_a else i
    in_b: dict[Hashable, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if in_a.get(line, -1) >= 0:
            in_b[line] = -1 if line in in_b else j
    return _longest_increasing(sorted((in_a[line], j) for line, j in in_b.items() if j >= 0))


def _windowed(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int, bhi: int) -> list[Opcode]:
    """Diff a piece window by window: difflib on ``WINDOW`` lines of each side, kept up to its last equal run.

    The next window starts where that run ends, so a piece whose two
    sides are shifted against each other stays aligned; a window with no
    line in common is taken as replaced whole.
    """
    out: list[Opcode] = []
    i, j = alo, blo
    while (ahi - i) * (bhi - j) > BOUNDED:
        i2, j2 = min(ahi, i + WINDOW), min(bhi, j + WINDOW)
        window = _difflib(a, b, i, i2, j, j2)
        last = max((k for k, op in enumerate(window) if op[0] == "equal"), default=-1)
        if last < 0:
            out.append(("replace", i, i2, j, j2))
            i, j = i2, j2
            continue
        out += window[: last + 1]
        i, j = window[last][2], window[last][4]
    return out + _difflib(a, b, i, ahi, j, bhi)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by i) whose j increase too (patience sorting)."""
    tails: list[int] = []  # tails[k]: the smallest j ending an increasing run of length k + 1
    ends: list[int] = []  # the index in pairs of that run's last pair
    back: list[int] = []  # for each pair, the index of the pair before it in its run
    for number, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        back.append(ends[k - 1] if k else -1)
        if k == len(tails):
            tails.append(j)
            ends.append(number)
        else:
            tails[k] = j
            ends[k] = number
    run: list[tuple[int, int]] = []
    at = ends[-1] if ends else -1
    while at >= 0:
        run.append(pairs[at])
        at = back[at]
    run.reverse()
    return run


def _difflib(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int, bhi: int) -> list[Opcode]:
    matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
    return [(tag, i1 + alo, i2 + alo, j1 + blo, j2 + blo) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def _merged(raw: list[Opcode]) -> list[Opcode]:
    """Join neighbours: equal runs with equal runs, changes with changes (one replace where both sides have lines)."""
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in raw:
        if i1 == i2 and j1 == j2:
            continue
        if out and (tag == "equal") == (out[-1][0] == "equal"):
            _, i1, _, j1, _ = out.pop()
        if tag != "equal":
            tag = "insert" if i1 == i2 else "delete" if j1 == j2 else "replace"
        out.append((tag, i1, i2, j1, j2))
    return out


def grouped(codes: list[Opcode], context: int = 3) -> Iterator[list[Opcode]]:
    """Group opcodes into hunks with ``context`` lines around each change, as ``get_grouped_opcodes`` does."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    width = context + context
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        # A long stretch of equal lines ends one hunk and starts the next.
        if tag == "equal" and i2 - i1 > width:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group
