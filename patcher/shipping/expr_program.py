"""GNU ``expr``: what it prints, and its status: 0, 1 where the value is empty or zero, 2 for a bad expression.

Older install scripts count and compare with it (``i=$(expr $i + 1)``,
``expr "$a" = "$b" >/dev/null && ...``), and its status is easy to miss:
``expr $n - 1`` at n=1 prints 0 and fails, which ends a script under
``set -e``. The reader follows coreutils' own grammar (``expr.c``: ``|``,
then ``&``, the comparisons, ``+ -``, ``* / %``, ``:``, then the keywords
``length``, ``substr``, ``index``, ``match``, ``+ TOKEN`` and parentheses),
and leaves to the image what needs a regular expression (``:``, ``match``)
or the locale (the order of two strings that are not both integers; a
length or position past ASCII). Checked with GNU coreutils 9.1.
"""

from __future__ import annotations

import re

from .shell_words import is_known

_INTEGER = re.compile(r"-?[0-9]+")
# GNU expr's integers have no bound (GMP); CPython refuses to read or print one past 4,300 digits, and a hostile
# script's products would grow without end. Past this many digits a value is the image's to say.
_MAX_DIGITS = 4_000
_COMPARISONS = ("<", "<=", "=", "==", "!=", ">=", ">")


class _Unknown(Exception):
    """What only the image's expr knows: a regular expression, the locale's collation."""


class _Invalid(Exception):
    """expr refuses the expression (status 2): a syntax error, a non-integer argument, a division by zero."""


def run_expr(args: list[str]) -> tuple[str, int] | None:
    """``expr ARGS``: (what it prints, its status), or None when the reader cannot know them."""
    if not all(is_known(a) for a in args):
        return None
    if args[:1] == ["--"]:
        args = args[1:]
    try:
        reader = _Reader(args)
        value = reader.either(True)
        if reader.at < len(args):
            raise _Invalid(f"syntax error: unexpected argument {args[reader.at]!r}")
    except _Unknown:
        return None
    except _Invalid:
        return "", 2
    except RecursionError:  # '( ( ( ...' a hostile script nests past what the reader walks
        return None
    return f"{value}\n", 1 if _null(value) else 0


def _null(value: int | str) -> bool:
    """coreutils' ``null``: 0, the empty string, or a string of zeros with an optional leading '-' ('-00')."""
    if isinstance(value, int):
        return value == 0
    digits = value[1:] if value.startswith("-") else value
    return value == "" or digits != "" and set(digits) == {"0"}


def _integer(value: int | str) -> int | None:
    if isinstance(value, int):
        return value
    if not _INTEGER.fullmatch(value):
        return None
    if len(value) > _MAX_DIGITS:
        raise _Unknown
    return int(value)


def _bounded(number: int) -> int:
    if number.bit_length() > _MAX_DIGITS * 3:  # 3 bits a digit at least: far fewer digits than CPython's limit
        raise _Unknown
    return number


class _Reader:
    """One level of expr.c's grammar per method, lowest first; ``evaluate`` False parses a branch that ``|`` or
    ``&`` does not need (no error in it counts, as in coreutils)."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.at = 0

    def _next_is(self, word: str) -> bool:
        if self.at < len(self.args) and self.args[self.at] == word:
            self.at += 1
            return True
        return False

    def either(self, evaluate: bool) -> int | str:  # ARG1 | ARG2
        left = self.both(evaluate)
        while self._next_is("|"):
            right = self.both(evaluate and _null(left))
            if _null(left):
                left = 0 if _null(right) else right
        return left

    def both(self, evaluate: bool) -> int | str:  # ARG1 & ARG2
        left = self.compared(evaluate)
        while self._next_is("&"):
            right = self.compared(evaluate and not _null(left))
            if _null(left) or _null(right):
                left = 0
        return left

    def compared(self, evaluate: bool) -> int | str:
        left = self.summed(evaluate)
        while self.at < len(self.args) and self.args[self.at] in _COMPARISONS:
            op = self.args[self.at]
            self.at += 1
            right = self.summed(evaluate)
            if evaluate:
                left = int(_compare(left, op, right))
        return left

    def summed(self, evaluate: bool) -> int | str:
        left = self.multiplied(evaluate)
        while self.at < len(self.args) and self.args[self.at] in ("+", "-"):
            op = self.args[self.at]
            self.at += 1
            right = self.multiplied(evaluate)
            if evaluate:
                a, b = _operands(left, right)
                left = _bounded(a + b if op == "+" else a - b)
        return left

    def multiplied(self, evaluate: bool) -> int | str:
        left = self.matched(evaluate)
        while self.at < len(self.args) and self.args[self.at] in ("*", "/", "%"):
            op = self.args[self.at]
            self.at += 1
            right = self.matched(evaluate)
            if evaluate:
                a, b = _operands(left, right)
                if op == "*":
                    left = _bounded(a * b)
                elif b == 0:
                    raise _Invalid("division by zero")
                else:  # C's division: rounded toward zero, the remainder taking the dividend's sign
                    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                    left = quotient if op == "/" else a - b * quotient
        return left

    def matched(self, evaluate: bool) -> int | str:
        left = self.keyword(evaluate)
        while self._next_is(":"):
            self.keyword(evaluate)
            if evaluate:
                raise _Unknown  # a basic regular expression, anchored at the start
        return left

    def keyword(self, evaluate: bool) -> int | str:
        if self._next_is("+"):
            return self._token()
        if self._next_is("length"):
            text = str(self.keyword(evaluate))
            _ascii(text, evaluate)
            return len(text)
        if self._next_is("match"):
            self.keyword(evaluate)
            self.keyword(evaluate)
            if evaluate:
                raise _Unknown
            return 0
        if self._next_is("index"):
            text, chars = str(self.keyword(evaluate)), str(self.keyword(evaluate))
            _ascii(text + chars, evaluate)
            return next((number for number, c in enumerate(text, 1) if c in chars), 0)
        if self._next_is("substr"):
            text = str(self.keyword(evaluate))
            start, length = _integer(self.keyword(evaluate)), _integer(self.keyword(evaluate))
            _ascii(text, evaluate)
            if start is None or length is None or start <= 0 or length <= 0:
                return ""
            return text[start - 1:start - 1 + length]
        return self.primary(evaluate)

    def primary(self, evaluate: bool) -> int | str:
        if self._next_is("("):
            value = self.either(evaluate)
            if not self._next_is(")"):
                raise _Invalid("syntax error: expecting ')'")
            return value
        if self._next_is(")"):
            raise _Invalid("syntax error: unexpected ')'")
        return self._token()

    def _token(self) -> str:
        if self.at >= len(self.args):
            raise _Invalid("syntax error: missing argument")
        self.at += 1
        return self.args[self.at - 1]


def _ascii(text: str, evaluate: bool) -> None:
    """Past ASCII a length or a position is the locale's (characters in UTF-8, bytes in C): the image's to say."""
    if evaluate and not text.isascii():
        raise _Unknown


def _operands(left: int | str, right: int | str) -> tuple[int, int]:
    a, b = _integer(left), _integer(right)
    if a is None or b is None:
        raise _Invalid("non-integer argument")
    return a, b


def _compare(left: int | str, op: str, right: int | str) -> bool:
    """Two integers compare as numbers; other strings by the locale's collation, of which equality is the same in
    every locale a build would use, and order is not ('a' < 'B' in en_US.UTF-8, not in C)."""
    a, b = _integer(left), _integer(right)
    if a is None or b is None:
        if op not in ("=", "==", "!="):
            raise _Unknown
        a, b = str(left), str(right)  # type: ignore[assignment]
        return (a == b) != (op == "!=")
    return {"<": a < b, "<=": a <= b, "=": a == b, "==": a == b, "!=": a != b, ">=": a >= b, ">": a > b}[op]
