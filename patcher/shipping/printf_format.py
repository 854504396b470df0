"""What POSIX ``printf`` prints for a format and its arguments, and the escapes of ``%b`` (dash's echo reads them too)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .shell_words import MAX_WORD, is_known


class Unsure(Exception):
    """printf would print what the reader cannot work out exactly (an error, a shell-dependent form)."""


class NotANumber(Unsure):
    """A numeric conversion's argument is text printf cannot read as a number: bash and dash both fail (status
    1), after printing what each makes of it (0, or the digits it read)."""


class BadDirective(Unsure):
    """A ``%`` directive printf refuses (``%5%``: a ``%%`` with a flag or a width): bash fails it (status 1),
    dash too (status 2); what each prints is not guessed."""


@dataclass(frozen=True)
class Failure:
    """The status each shell's printf ends with where it fails, None where that one succeeds."""

    bash: int | None
    dash: int | None


_NOT_A_NUMBER = Failure(bash=1, dash=1)
_BAD_DIRECTIVE = Failure(bash=1, dash=2)
_OUT_OF_RANGE = Failure(bash=None, dash=1)  # bash only warns ("Numerical result out of range")


class _Stop(Exception):
    """``\\c`` in a ``%b`` argument: printf prints nothing more."""


_FORMAT_ESCAPES = {"\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
# The width starts at a digit other than 0, so that the zeros before it are flags, read once: '%' and 100,000
# zeros is no longer a quadratic search of where the flags end.
_DIRECTIVE = re.compile(r"%([-+ 0#]*)([1-9][0-9]*)?(?:\.([0-9]*))?([sbcdiouxX%])")
_NUMBER = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def printf_output(fmt: str, args: list[str]) -> str | None:
    """What ``printf FMT ARGS...`` prints, or None when the reader cannot say exactly (see ``printf_outcome``)."""
    return printf_outcome(fmt, args)[0]


def printf_outcome(fmt: str, args: list[str]) -> tuple[str | None, Failure | None]:
    """What ``printf FMT ARGS...`` prints, or None when the reader cannot say exactly; and how bash and dash fail
    it, where one of them does for sure (an argument of a numeric conversion that is no number, or past 64 bits;
    a directive printf refuses). A number past 64 bits prints as the nearest one that fits (``%d``), or as 2^64 - 1
    (``%o %u %x %X``), as both shells' strtoimax and strtoumax give it.

    Only FMT is a format: ``%`` and ``\\`` in an argument are data (``%b`` reads escapes in its argument). FMT
    is used again while arguments remain; a conversion with none left gets "" (0 for numbers). Escapes in FMT:
    ``\\ \\a \\b \\f \\n \\r \\t \\v`` and octal ``\\NNN``; conversions ``%s %b %c %d %i %o %u %x %X %%``
    with ``-``, ``+``, space and ``0`` flags, a width and a precision (``%s %b %c`` take the ``#`` flag too, and
    ignore every flag but ``-``). Anything else (``\\x41``, ``%*d``, ``%#x``, ``%q``, an argument %d cannot read,
    a byte past ASCII or a NUL) is not guessed.
    """
    if not is_known(fmt):
        return None, None
    clamped: list[int] = []  # a number past 64 bits, printed as the nearest that fits: dash fails it
    try:
        text = _format_all(fmt, args, clamped)
    except _Stop as stop:
        text = str(stop)
    except NotANumber:
        return None, _NOT_A_NUMBER
    except BadDirective:
        return None, _BAD_DIRECTIVE
    except Unsure:
        return None, _OUT_OF_RANGE if clamped else None
    return text, _OUT_OF_RANGE if clamped else None


def _format_all(fmt: str, args: list[str], clamped: list[int]) -> str:
    out: list[str] = []
    remaining = list(args)
    try:
        while True:
            used = _format_once(fmt, remaining, out, clamped)
            if not remaining or not used:
                return "".join(out)
    except _Stop as stop:
        raise _Stop("".join(out) + str(stop)) from None


def _format_once(fmt: str, remaining: list[str], out: list[str], clamped: list[int]) -> int:
    """Print ``fmt`` once into ``out``, taking its arguments from ``remaining``; return how many it took (the
    numbers past 64 bits it printed clamped are added to ``clamped``)."""
    used = 0
    index = 0
    size = sum(map(len, out))  # what earlier uses of the format printed
    while index < len(fmt):
        if size > MAX_WORD:
            raise Unsure("output past the reader's limit")
        char = fmt[index]
        if char == "\\":
            text, index = _escape(fmt, index + 1, in_argument=False)
            out.append(text)
            size += len(text)
            continue
        if char != "%":
            out.append(char)
            size += 1
            index += 1
            continue
        match = _DIRECTIVE.match(fmt, index)
        if match is None:
            raise Unsure("a conversion the reader does not follow")
        index = match.end()
        flags, width, precision, conversion = match.group(1), match.group(2) or "", match.group(3), match.group(4)
        if conversion == "%":
            if flags or width or precision is not None:
                raise BadDirective("%% with flags")
            out.append("%")
            size += 1
            continue
        # A width or precision past what the reader keeps of a word is not built (a script's
        # '%9999999999s' would take gigabytes); neither is output past it, the format used again.
        if _past(width) or _past(precision or ""):
            raise Unsure("a width past the reader's limit")
        arg = remaining.pop(0) if remaining else None
        used += arg is not None
        out.append(_convert(conversion, flags, width, precision, arg, clamped))
        size += len(out[-1])
    if size > MAX_WORD:
        raise Unsure("output past the reader's limit")
    return used


def _past(digits: str) -> bool:
    """Whether a width or precision is past what the reader keeps of a word; read by its length first, as CPython
    refuses int() of thousands of digits."""
    digits = digits.lstrip("0")
    return len(digits) > len(str(MAX_WORD)) or int(digits or "0") > MAX_WORD


def _convert(conversion: str, flags: str, width: str, precision: str | None, arg: str | None,
             clamped: list[int]) -> str:
    """One conversion of one argument (None: none was left)."""
    dot = "" if precision is None else "." + (precision or "0")
    if conversion in "sbc":
        # bash 5.2 and dash 0.5.12 alike: on %s, %b and %c the flags 0, +, space and # change nothing (glibc's
        # printf, and bash's own %b, pad strings with spaces: '%05s' is '  xyz'); only - (pad on the right) counts.
        # %c prints its character whatever the precision ('%.0c' prints it).
        flags = "-" if "-" in flags else ""
        text = arg or ""
        if conversion == "b":
            if not is_known(text):
                raise Unsure("escapes in an unknown value")
            text, stopped = read_escapes(text)
            if stopped:
                if width or dot:
                    raise Unsure("\\c in a %b with a width")
                raise _Stop(text)
        elif conversion == "c":
            if not text or not is_known(text[:1]):
                raise Unsure("%c of nothing (a NUL) or of an unknown value")
            text = text[:1]
            dot = ""
        if (width or dot) and not is_known(text):
            raise Unsure("the width of an unknown value")
        if (width or dot or conversion == "c") and not text.isascii():
            # Both shells count bytes, not characters: '%c' and '%.1s' of é print its first byte, '%5s' pads it
            # with 3 spaces in UTF-8; how many bytes the script's text is the reader does not keep.
            raise Unsure("the bytes of a character past ASCII")
        return f"%{flags}{width}{dot}s" % text
    number = _integer(arg)
    if "#" in flags:
        raise Unsure("the alternate form of a number (%#x is 0xff, %#o 0377 in C, not as Python prints them)")
    if not -(1 << 63) <= number < 1 << 63:  # past 64 bits: strtoimax and strtoumax give the nearest they hold
        clamped.append(number)
        number = (1 << 64) - 1 if conversion in "ouxX" else max(-(1 << 63), min(number, (1 << 63) - 1))
    if conversion in "ouxX" and number < 0:
        raise Unsure("a negative number printed unsigned")
    if dot:
        if number == 0 and dot == ".0":
            raise Unsure("a zero printed with no digits")
        flags = flags.replace("0", "")  # C ignores the 0 flag when a precision is given
    return f"%{flags}{width}{dot}{'d' if conversion in 'iu' else conversion}" % number


def _integer(arg: str | None) -> int:
    """An argument of ``%d`` as printf reads it: decimal, ``0`` octal, ``0x`` hex, or ``'C`` (C's code)."""
    if arg is None or arg == "":
        return 0
    if not is_known(arg):
        raise Unsure("a number the reader cannot know")
    if arg[:1] in ("'", '"'):
        if len(arg) < 2 or not arg[1].isascii():
            raise Unsure("the code of a character past ASCII")
        return ord(arg[1])
    match = _NUMBER.fullmatch(arg)
    if match is None:
        raise NotANumber(f"{arg} is not a number: printf fails")
    sign, digits = match.groups()
    if len(digits) > 24:  # past 64 bits in any base (int() would also refuse thousands of decimal digits)
        value = 1 << 64
    else:
        value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits.startswith("0") else 10)
    return -value if sign == "-" else value


def read_escapes(text: str) -> tuple[str, bool]:
    """The argument of ``%b`` with its escapes read (``\\0NNN`` octal), and whether a ``\\c`` ends all output there."""
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] != "\\":
            out.append(text[index])
            index += 1
            continue
        if text[index + 1:index + 2] == "c":
            return "".join(out), True
        piece, index = _escape(text, index + 1, in_argument=True)
        out.append(piece)
    return "".join(out), False


def _escape(text: str, index: int, in_argument: bool) -> tuple[str, int]:
    """The escape whose letter is at ``text[index]``: its character and where the text goes on."""
    letter = text[index:index + 1]
    if letter in _FORMAT_ESCAPES:
        return _FORMAT_ESCAPES[letter], index + 1
    if letter.isdigit() and letter < "8":
        # In the format \\NNN is octal (1-3 digits); in a %b argument \\0NNN is (0-3 after the 0), and dash and
        # bash read \\NNN there as well.
        start = index + 1 if in_argument and letter == "0" else index
        end = start
        while end < len(text) and end < start + 3 and "0" <= text[end] <= "7":
            end += 1
        code = int(text[start:end] or "0", 8)
        if not 0 < code < 128:
            raise Unsure("a NUL or a byte past ASCII")
        return chr(code), end
    raise Unsure(f"the escape \\{letter}, which shells print differently")
