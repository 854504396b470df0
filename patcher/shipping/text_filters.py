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
    count, by_lines, operands = "10", True, []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        if re.fullmatch(r"-[0-9]+", arg) and index == 1:  # obsolete 'head -5', 'tail -2'
            count = arg[1:]
            continue
        if program == "tail" and re.fullmatch(r"\+[0-9]+", arg) and index == 1:  # obsolete 'tail +2'
            count = arg
            continue
        option = re.fullmatch(r"(-n|-c|--lines=?|--bytes=?)(.*)", arg)
        if option:
            by_lines = option.group(1) in ("-n", "--lines", "--lines=")
            value = option.group(2)
            if not value:
                if index >= len(args):
                    return REFUSED  # "option requires an argument"
                value, index = args[index], index + 1
            count = value
            continue
        if arg in ("-q", "--quiet", "--silent"):
            continue
        if arg.startswith("-") and arg != "-":
            return UNKNOWN  # -z, -v, -f, --follow...: not followed
        operands.append(arg)
    if len(operands) > 1:
        return UNKNOWN  # a header before each file's part
    if not _COUNT.fullmatch(count):
        return UNKNOWN if re.fullmatch(r"[+-]?[0-9]+[a-zA-Z]+", count) else REFUSED  # 1K: a multiplier
    text = read(operands[0] if operands else "-")
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
    delimiter, output, only_delimited, complement = "\t", None, False, False
    mode, ranges, operands = "", "", []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        long = re.fullmatch(r"--(delimiter|fields|characters|bytes|output-delimiter)(?:=(.*))?", arg, re.S)
        short = re.fullmatch(r"-([dfcb])(.*)", arg, re.S)
        if long or short:
            name = {"delimiter": "d", "fields": "f", "characters": "c", "bytes": "b",
                    "output-delimiter": "o"}[long.group(1)] if long else short.group(1)  # type: ignore[union-attr]
            value = (long.group(2) if long else short.group(2) or None)  # type: ignore[union-attr]
            if value is None:
                if index >= len(args):
                    return REFUSED
                value, index = args[index], index + 1
            if name == "d":
                if len(value) != 1:
                    return REFUSED  # "the delimiter must be a single character"
                delimiter = value
            elif name == "o":
                output = value
            else:
                if mode and mode != name:
                    return REFUSED  # "only one list may be specified"
                mode, ranges = name, value
            continue
        if arg in ("-s", "--only-delimited"):
            only_delimited = True
        elif arg == "--complement":
            complement = True
        elif arg == "-n":
            pass  # ignored
        elif arg.startswith("-") and arg != "-":
            return UNKNOWN
        else:
            operands.append(arg)
    wanted = _ranges(ranges) if mode else None
    if wanted is None:
        return REFUSED
    texts = [read(operand) for operand in operands or ["-"]]
    if any(text is None for text in texts):
        return UNKNOWN
    text = "".join(t for t in texts if t is not None)
    if mode == "b" and not text.isascii():
        return UNKNOWN
    printed = []
    for line in _lines(text):
        line = line[:-1] if line.endswith("\n") else line
        if mode != "f":
            chosen = [c for n, c in enumerate(line, 1) if _selected(n, wanted) != complement]
            printed.append((output or "").join(chosen) if output is not None else "".join(chosen))
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
        char, index = text[index], index + 1
        if char == "\\" and index < len(text):
            octal = re.match(r"[0-7]{1,3}", text[index:])
            if octal:
                char, index = chr(int(octal.group(0), 8) & 0xFF), index + octal.end()
            else:
                char, index = _TR_ESCAPES.get(text[index], text[index]), index + 1
        if index + 1 < len(text) and text[index] == "-":
            end = text[index + 1]
            if end >= char:  # a range; 'z-a' is refused by tr, and here left to it
                out.extend(chr(c) for c in range(ord(char), ord(end) + 1))
                index += 2
                continue
            return None
        out.append(char)
    return "".join(out) if all(ord(c) < 128 for c in out) else None


def _tr(args: list[str], read: Reader) -> Filtered:
    flags: set[str] = set()
    operands: list[str] = []
    long = {"--delete": "d", "--squeeze-repeats": "s", "--truncate-set1": "t", "--complement": "c"}
    for index, arg in enumerate(args):
        if arg == "--":
            operands += args[index + 1:]
            break
        if arg in long:
            flags.add(long[arg])
        elif re.fullmatch(r"-[dstcC]+", arg):
            flags.update(arg[1:])
        elif arg.startswith("-") and len(arg) > 1:
            return UNKNOWN
        else:
            operands.append(arg)
    if flags & {"c", "C"}:
        return UNKNOWN  # the complement of a set: not followed
    expected = 2 if ("d" in flags) == ("s" in flags) and not ("d" in flags and len(operands) == 1) else 1
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
