"""What ``head``, ``tail``, ``cut`` and ``tr`` print, where the reader knows the text they read (GNU coreutils 9.1).

``V=$(printf '%s\\n' $LIST | head -n 1)``, ``NAME=$(echo "$F" | cut -d. -f1)`` or ``tr a-z A-Z``
name a path from text the build wrote: the reader computes what they print
from a known input (a pipe, a here-document, a placed file) and keeps
anything else unknown: several files (head and tail print a header for
each), a count with a multiplier suffix (``-n 1K``), bytes of a text past
ASCII, an option it does not follow (``-z``, ``tail -f``). A command line
coreutils refuses prints nothing and fails, as coreutils does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .tool_options import read_options

Reader = Callable[[str], "str | None"]  # operand ("-": standard input) -> its text, None where unknown

_COUNT = re.compile(r"[+-]?[0-9]{1,18}")


@dataclass(frozen=True)
class Filtered:
    """What the program prints (None: unknown) and whether it succeeds."""

    text: str | None
    ok: bool = True


UNKNOWN = Filtered(None)
REFUSED = Filtered("", False)


def filter_text(program: str, args: list[str], read: Reader) -> Filtered:
    """``program ARGS`` on the text ``read(operand)`` gives (operand "-" is standard input; None: unknown)."""
    if program in ("head", "tail"):
        return _head_or_tail(program, args, read)
    if program == "tr":
        return _tr(args, read)
    return _cut(args, read)


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its newline (the last may have none): only ``\\n`` ends a line."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _head_or_tail(program: str, args: list[str], read: Reader) -> Filtered:
    # 'head -5', 'tail -2', 'tail +2': the count as the first word (the obsolete form coreutils still reads).
    obsolete = bool(args) and bool(re.fullmatch(r"-[0-9]+" if program == "head" else r"[-+][0-9]+", args[0]))
    if obsolete:
        count, args = args[0].lstrip("-"), args[1:]
    o = read_options(program, args)
    if o.unknown or o.flags - {"q", "quiet", "silent"}:
        return UNKNOWN  # -z, -v, -f, --retry...: not followed
    lines, data = o.every.get("n", []) + o.every.get("lines", []), o.every.get("c", []) + o.every.get("bytes", [])
    if lines and data:
        return UNKNOWN  # the last of them counts: getopt's order is not kept here
    by_lines = not data
    if not obsolete:
        count = (lines or data or ["10"])[-1]
    if len(o.operands) > 1:
        return UNKNOWN  # a header before each file's part
    if not _COUNT.fullmatch(count):
        return UNKNOWN if re.fullmatch(r"[+-]?[0-9]+[a-zA-Z]+", count) else REFUSED  # 1K: a multiplier
    text = read(o.operands[0] if o.operands else "-")
    if text is None:
        return UNKNOWN
    if not by_lines and not text.isascii():
        return UNKNOWN  # bytes of a text the reader holds as characters
    items: list[str] = _lines(text) if by_lines else list(text)
    number = int(count.lstrip("+-"))
    if program == "head":
        kept = items[:max(len(items) - number, 0)] if count.startswith("-") else items[:number]
    elif count.startswith("+"):
        kept = items[max(number - 1, 0):]
    else:
        kept = items[max(len(items) - number, 0):] if number else []
    return Filtered("".join(kept))


def _cut(args: list[str], read: Reader) -> Filtered:
    o = read_options("cut", args)
    if o.unknown or "z" in o.flags or "zero-terminated" in o.flags:
        return UNKNOWN
    lists = [(key[0] if len(key) == 1 else {"bytes": "b", "characters": "c", "fields": "f"}[key], value)
             for key in ("b", "c", "f", "bytes", "characters", "fields") for value in o.every.get(key, [])]
    if len(lists) != 1:
        return REFUSED  # "you must specify a list", "only one list may be specified" (-b1 -b2 too)
    mode, ranges = lists[0]
    delimiter = o.values.get("d", o.values.get("delimiter", "\t"))
    if len(delimiter) != 1:
        return REFUSED  # "the delimiter must be a single character"
    output = o.values.get("output-delimiter")
    if output == "":
        return UNKNOWN  # an empty output delimiter is a NUL byte, which no shell value holds
    only_delimited = bool(o.flags & {"s", "only-delimited"})
    complement = "complement" in o.flags
    wanted = _ranges(ranges)
    if wanted is None:
        return REFUSED
    texts = [read(operand) for operand in o.operands or ["-"]]
    if any(text is None for text in texts):
        return UNKNOWN
    # Each file's last line is a line of its own, ended or not.
    text = "".join(t if not t or t.endswith("\n") else t + "\n" for t in texts if t is not None)
    if mode != "f" and not text.isascii():
        return UNKNOWN  # GNU cut's -c counts bytes, as -b does: a character past ASCII is cut apart
    runs = _runs(wanted, complement)
    printed = []
    for line in _lines(text):
        line = line[:-1] if line.endswith("\n") else line
        if mode != "f":
            # The output delimiter goes between the runs of selected bytes, not between each byte of one.
            pieces = [line[low - 1:high] for low, high in runs if low <= len(line)]
            printed.append((output or "").join(pieces))
            continue
        if delimiter not in line:
            if not only_delimited:
                printed.append(line)
            continue
        fields = [f for n, f in enumerate(line.split(delimiter), 1) if _selected(n, wanted) != complement]
        printed.append((delimiter if output is None else output).join(fields))
    return Filtered("".join(p + "\n" for p in printed))


def _ranges(text: str) -> list[tuple[int, int]] | None:
    """cut's LIST: ``N``, ``N-``, ``N-M``, ``-M``, separated by commas (None: coreutils refuses it)."""
    found = []
    for piece in text.split(","):
        match = re.fullmatch(r"([0-9]{1,9})?(-)?([0-9]{1,9})?", piece)
        if not piece or match is None or not (match.group(1) or match.group(3)):
            return None
        low = int(match.group(1)) if match.group(1) else 1
        high = (int(match.group(3)) if match.group(3) else 10**9) if match.group(2) else low
        if low < 1 or high < low:
            return None  # "fields are numbered from 1", "invalid decreasing range"
        found.append((low, high))
    return found


def _runs(wanted: list[tuple[int, int]], complement: bool) -> list[tuple[int, int]]:
    """The runs of positions cut selects, in order: overlapping ranges merged (adjacent ones stay apart, as GNU
    cut prints the output delimiter between ``-c1,2``), or with ``--complement`` the runs between them."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(wanted):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    if not complement:
        return merged
    gaps, start = [], 1
    for low, high in merged:
        if low > start:
            gaps.append((start, low - 1))
        start = max(start, high + 1)
    return [*gaps, (start, 10**9)] if start <= 10**9 else gaps


def _selected(number: int, wanted: list[tuple[int, int]]) -> bool:
    return any(low <= number <= high for low, high in wanted)


_CLASSES = {
    "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "lower": "abcdefghijklmnopqrstuvwxyz", "digit": "0123456789",
    "alpha": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "alnum": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "space": "\t\n\v\f\r ", "blank": "\t ", "punct": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "xdigit": "0123456789ABCDEFabcdef",
}
_TR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}


def _tr_set(text: str) -> str | None:
    """tr's SET as the characters it lists, in order (ASCII, the C locale's classes); None: not followed."""
    out: list[str] = []
    index = 0
    while index < len(text):
        class_ = re.match(r"\[:([a-z]+):\]", text[index:])
        if class_:
            if class_.group(1) not in _CLASSES:
                return None
            out.extend(_CLASSES[class_.group(1)])
            index += class_.end()
            continue
        if text.startswith(("[=", "["), index) and re.match(r"\[(=.=|.\*[0-9]*)\]", text[index:]):
            return None  # [=c=] and [c*n]
        char, index = _tr_char(text, index)
        if index + 1 < len(text) and text[index] == "-":
            end, after = _tr_char(text, index + 1)  # an escape ends a range too: '\60-\62'
            if end >= char:  # a range; 'z-a' is refused by tr, and here left to it
                out.extend(chr(c) for c in range(ord(char), ord(end) + 1))
                index = after
                continue
            return None
        out.append(char)
    return "".join(out) if all(ord(c) < 128 for c in out) else None


def _tr_char(text: str, index: int) -> tuple[str, int]:
    """The character of a tr set at ``index`` (an escape read), and where the next one starts."""
    char, index = text[index], index + 1
    if char == "\\" and index < len(text):
        octal = re.match(r"[0-7]{1,3}", text[index:])
        if octal and int(octal.group(0), 8) > 0o377:
            octal = re.match(r"[0-7]{2}", text[index:])  # GNU tr: '\400' is '\040' then '0'
        if octal:
            return chr(int(octal.group(0), 8)), index + octal.end()
        return _TR_ESCAPES.get(text[index], text[index]), index + 1
    return char, index


def _tr(args: list[str], read: Reader) -> Filtered:
    # tr's options come before its sets (getopt "+": no permuting): the first set ends them.
    ends = next((i for i, arg in enumerate(args) if arg == "--" or not arg.startswith("-") or arg == "-"), len(args))
    o = read_options("tr", args[:ends])
    if o.unknown:
        return UNKNOWN
    long = {"delete": "d", "squeeze-repeats": "s", "truncate-set1": "t", "complement": "c"}
    flags = {long.get(flag, flag) for flag in o.flags}
    operands = args[ends + 1:] if args[ends:ends + 1] == ["--"] else args[ends:]
    if flags & {"c", "C"}:
        return UNKNOWN  # the complement of a set: not followed
    expected = 2 if ("d" in flags) == ("s" in flags) else 1  # -ds takes two sets, as translating does
    if "s" in flags and "d" not in flags and len(operands) in (1, 2):
        expected = len(operands)
    if len(operands) != expected:
        return REFUSED  # "missing operand", "extra operand"
    sets = [_tr_set(operand) for operand in operands]
    if any(found is None for found in sets):
        return UNKNOWN
    first, second = sets[0] or "", (sets[1] or "") if len(sets) > 1 else ""
    text = read("-")
    if text is None or not text.isascii():
        return UNKNOWN
    if "d" in flags:
        text = "".join(c for c in text if c not in first)
        squeezed = second
    elif len(sets) == 2:
        if not second:
            return REFUSED  # "when not truncating set1, string2 must be non-empty"
        if "t" in flags:
            first = first[:len(second)]
        second = second + second[-1] * (len(first) - len(second))
        table: dict[str, str] = {}
        for old, new in zip(first, second):
            table[old] = new  # the last mapping of a character wins, as in GNU tr
        text = "".join(table.get(c, c) for c in text)
        squeezed = second
    else:
        squeezed = first
    if "s" in flags:
        text = re.sub("([" + re.escape(squeezed) + "])\\1+", r"\1", text) if squeezed else text
    return Filtered(text)
