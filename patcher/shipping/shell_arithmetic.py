"""Shell arithmetic: ``$((...))`` and bash's ``((...))`` and ``for ((...))``, over integers only.

What is followed: decimal, octal (``010``) and hexadecimal (``0x1F``)
numbers; variables holding integers (an empty or unset-on-purpose one is
0); ``+ - * / %`` rounded as C rounds; one comparison (``< <= > >= == !=``)
giving 1 or 0; ``&&`` and ``||``; and, for ``((...))``, the assignments
``NAME = EXPR``, ``NAME += EXPR`` (``-= *= /= %=``), ``NAME++``, ``++NAME``
(and ``--``) and a comma between expressions. Anything else (a power, a bit
operation, a ternary, a value only the image knows) is unknown: never a guess.

As bash and dash do, the parameters written with a ``$`` (``$NAME``,
``${NAME}``, ``$1``, ``${10}``, ``$#``, ``$?``) are expanded in the text
first, once for the whole expression, and the text is evaluated after:
``$((1 + $#))`` is 3 after ``set -- a b``, ``$((1$x))`` with x empty is 1,
``$((${a}b))`` is no number. A bare NAME is read while evaluating.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from ..depth import parse_problem

VariableText = Callable[[str], str]  # a variable's value as text: "" unset, a marker when only the image knows
Assign = Callable[[str, "int | None"], None]  # None: the value the variable gets is unknown

_NAME = r"[A-Za-z_]\w*"
_PREFIX = re.compile(rf"\s*(\+\+|--)\s*({_NAME})\s*", re.DOTALL)
_POSTFIX = re.compile(rf"\s*({_NAME})\s*(\+\+|--)\s*", re.DOTALL)
_ASSIGNMENT = re.compile(rf"\s*({_NAME})\s*([-+*/%]?)=(?!=)(.*)", re.DOTALL)
# A name an expression may assign anywhere in it: 'x++ + 1', 'y = x += 1', '(x = 3) * 2', 'x <<= 1' (not '==',
# '<=', '>=' or '!=').
_ASSIGNED = re.compile(rf"(?:\+\+|--)\s*({_NAME})|(?<!\w)({_NAME})\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))")
# A variable's value read as a number: ASCII digits, and only the blanks bash reads around one (a space, a tab, a
# newline): \s and \d would take '\r1', a no-break space or '٣', where bash fails the expression.
_INTEGER = re.compile(r"[ \t\n]*-?[0-9]+[ \t\n]*")
BLANKS = " \t\n"  # what bash reads as blanks in an expression (shell_words strips a $((...)) by them too)
# What bash and dash read in an expression is ASCII, its blanks spaces, tabs and newlines: any other character
# ('\r', '\f', '\x1c', a no-break space, which Python's strip() and parser skip) is not evaluated.
_FOREIGN = re.compile(r"[^\t\n\x20-\x7e]")


# What Python would read where sh does not, or what the reader does not follow: a comment ('2#101' is bash's
# base notation, '#' ends a Python line), strings, floats, subscripts, a ternary, a comma, a power, a shift or a
# bit operation; digit separators (1_000) and 0b and 0o prefixes are looked for once the names are replaced.
_NOT_FOLLOWED = re.compile(r"[#'\"`.\[\]@;:?,^~\\]|\*\*|<<|>>|(?<![&|])[&|](?![&|])")
_PYTHON_NUMBER = re.compile(r"_|\b0[bBoO]")  # once the names are replaced: 1_000, 0b101, 0o17
# A parameter expanded before the text is evaluated: $NAME, ${NAME}, $N (one digit: $10 is ${1}0), ${N}, $#,
# ${#}, $?, ${?}. ($$, $! and $- are the image's; ${#NAME}, ${NAME:-...}, $(...) are not followed: a '$' is left,
# and $$ is read as one, so that '$$x' is not '$' and $x, and expanding the text again changes nothing.)
_PARAMETER = re.compile(rf"\$\$|\$(?:\{{({_NAME}|\d+|[#?])\}}|({_NAME}|\d|[#?]))")
_PASTED = re.compile(r"[ \t]*-?[0-9]+[ \t]*")  # a value the reader pastes into the text as it stands
_UNKNOWN = "@"  # pasted for any other value: the text is then not evaluated (an '@' is not followed)
# bash reads a '++' or '--' beside a name as an increment ('x--3' is x-- then 3, a syntax error; dash reads
# x - -3): which the reader only follows as a whole expression (((i++)), $((--n))).
_STEP = re.compile(r"(?<!\w)[A-Za-z_]\w*\s*(?:\+\+|--)|(?:\+\+|--)\s*[A-Za-z_]")  # a name from its start: linear


def expand_parameters(text: str, variable: VariableText) -> str:
    """``text`` with its ``$`` parameters replaced by their values, as sh expands them before it evaluates the
    text: an empty value is pasted as nothing (``1$x`` is 1), an integer as written (``$#`` is 2, ``0${a}1`` is
    021), anything else (a marker, text a shell would read as a name or an expression) as ``@``, which the reader
    does not evaluate."""
    def value_of(match: re.Match[str]) -> str:
        if match.group() == "$$":
            return "$$"
        value = variable(match.group(1) or match.group(2))
        return value if value == "" or _PASTED.fullmatch(value) else f" {_UNKNOWN} "

    return _PARAMETER.sub(value_of, text)


def evaluate(text: str, variable: VariableText) -> int | None:
    """The value of an expression without assignments, or None when the reader cannot know it.

    TEXT is as the shell evaluates it, its ``$`` parameters expanded (``expand_parameters``; ``[[ A -eq B ]]``
    and ``${NAME:OFFSET}`` hand over words already expanded): a ``$`` left in it is not evaluated, as bash
    refuses it (``x='$1'; [[ $x -eq 1 ]]``)."""
    if "$" in text or _FOREIGN.search(text) or _NOT_FOLLOWED.search(text) or _STEP.search(text):
        return None

    def value_of(match: re.Match[str]) -> str:
        value = variable(match.group(1))
        if value.strip(BLANKS) == "":
            return "0"
        # Not a number: the expression is unknown. The stand-in cannot run into the text around it as a number
        # would.
        return value.strip(BLANKS) if _INTEGER.fullmatch(value) else " x "

    # A name right after a digit is part of a number (0x1F, or '1b' after ${a}b with a=1: no number); a number
    # with a leading 0 is octal, as in C.
    expression = re.sub(rf"(?<![0-9A-Za-z_])({_NAME})", value_of, text)
    if _PYTHON_NUMBER.search(expression):
        return None
    expression = re.sub(r"(?<![\w.])0([0-7]+)\b", r"0o\1", expression)
    expression = expression.replace("&&", " and ").replace("||", " or ")
    if parse_problem(expression, strings_nest=False) is not None:  # ast recurses per level of nesting
        return None
    try:
        return _integer(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def run_arithmetic(text: str, variable: VariableText, assign: Assign) -> int | None:
    """bash's ``((TEXT))``: make its assignments and return its value (None: unknown; what it assigned then too).

    Its ``$`` parameters are expanded once, before any of it runs: in ``((i = 1, j = $i))`` j gets i's value from
    before."""
    return run_expanded(expand_parameters(text, variable), variable, assign)


def run_expanded(text: str, variable: VariableText, assign: Assign) -> int | None:
    """``run_arithmetic`` of a text whose ``$`` parameters are expanded already."""
    value: int | None = 0
    for expression in text.split(","):
        value = _run_one(expression, variable, assign)
    return value


def _run_one(text: str, variable: VariableText, assign: Assign) -> int | None:
    value = _run_known(text, variable, assign)
    if value is None:
        # Not worked out: whatever it assigns on the way is unknown too, never the value from before.
        for name in assigned_names(text):
            assign(name, None)
    return value


def assigned_names(text: str) -> list[str]:
    """The names an expression may assign anywhere in it (``x++ + 1``, ``y = x += 1``, ``(x = 3) * 2``)."""
    return [match.group(1) or match.group(2) for match in _ASSIGNED.finditer(text)]


def _run_known(text: str, variable: VariableText, assign: Assign) -> int | None:
    prefix, postfix, assignment = _PREFIX.fullmatch(text), _POSTFIX.fullmatch(text), _ASSIGNMENT.fullmatch(text)
    if prefix or postfix:
        name, op = (prefix.group(2), prefix.group(1)) if prefix else (postfix.group(1), postfix.group(2))  # type: ignore[union-attr]
        old = evaluate(name, variable)
        new = None if old is None else old + (1 if op == "++" else -1)
        assign(name, new)
        return new if prefix else old  # NAME++ gives the value before: ((i++)) with i=0 fails
    if assignment:
        name, op, rest = assignment.groups()
        new = evaluate(rest if not op else f"{name} {op} ({rest})", variable)
        assign(name, new)
        return new
    return evaluate(text, variable)


def _divide(a: int, b: int) -> int:
    """``a / b`` as sh computes it: rounded toward zero, exactly (no float on the way)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


# sh's / and % round toward zero (C), not down as Python's // and % do; sh has no //.
_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.Div: _divide, ast.Mod: lambda a, b: a - b * _divide(a, b)}
_COMPARISONS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
                ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def _integer(node: ast.AST) -> int:
    """Evaluate the operators above over integer literals (no powers: their size has no bound)."""
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value < 1 << 64:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _integer(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        result = _ARITHMETIC[type(node.op)](_integer(node.left), _integer(node.right))
        if abs(result) >= 1 << 64:
            raise ValueError("out of range")
        return int(result)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
        # One comparison only: C reads 'a < b < c' as '(a < b) < c', Python as 'a < b and b < c'.
        return int(_COMPARISONS[type(node.ops[0])](_integer(node.left), _integer(node.comparators[0])))
    if isinstance(node, ast.BoolOp):
        values = (_integer(v) != 0 for v in node.values)  # C's && and || stop early, as 'all' and 'any' do
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    raise ValueError("not integer arithmetic")
