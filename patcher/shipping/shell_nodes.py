"""The tree a shell script parses into: word parts that keep their quoting, commands, lists.

Words keep their quoting, so expansion can tell ``"$A"`` from ``$A``:
a word is a tuple of parts (literal text, ``$NAME``/``${NAME...}``,
``$(...)``/backquotes, ``$((...))``), each marked quoted or not.
``shell_lexer.py`` cuts a script into tokens of these words, and
``shell_syntax.py`` parses the tokens into the commands below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


class ShellSyntaxError(Exception):
    """The script does not parse: where, and why."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.start = line  # where the top-level command (or the token) it stops in starts


# -- words -----------------------------------------------------------------

@dataclass(frozen=True)
class Lit:
    """Literal text; ``quoted`` text is neither split nor globbed."""

    text: str
    quoted: bool = False


@dataclass(frozen=True)
class Param:
    """``$NAME`` or ``${NAME OP WORD}`` (``op`` is "" for a plain reference, "len" for ``${#NAME}``).

    bash's ``${NAME/PATTERN/STRING}`` (op ``/``, ``//``, ``/#`` or ``/%``) keeps PATTERN in ``arg`` and
    STRING in ``replacement``: they are split where the text has its first unquoted ``/``, before expansion.
    """

    name: str
    op: str = ""
    arg: tuple["Part", ...] | None = None
    quoted: bool = False
    replacement: tuple["Part", ...] = ()


@dataclass(frozen=True)
class Sub:
    """A command substitution, ``$(...)`` or backquotes: its text, parsed when it is expanded.

    bash's process substitution, ``<(...)`` or ``>(...)``, is one too (``process`` "<" or ">"): its command
    runs, and the word is the name of the pipe to it.
    """

    text: str
    line: int
    quoted: bool = False
    process: str = ""
    backquoted: bool = False  # `...`: bash parses it only when it runs (dash, and $(...) in both, when read)
    # ((bash, dash), the parsed text) once the command it is in was parsed: sh reads a $(...) with its command,
    # so running it needs no second parse (a hostile script nests them by the thousand). Set by shell_syntax.
    parsed: tuple[tuple[bool, bool], "Sequence"] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Arith:
    """``$((...))``."""

    text: str
    quoted: bool = False


Part = Union[Lit, Param, Sub, Arith]
Word = tuple[Part, ...]


# Declaration utilities: an argument that reads as an assignment is expanded as one (POSIX 2024, bash, dash):
# not split, not globbed, a '~' after its '=' or a ':' expanded; bash reads NAME=(...) there as an array.
DECLARATIONS = frozenset({"export", "readonly", "local", "declare", "typeset"})


# A number a script writes (a file descriptor, ${10}, 'break 2', 'shift 3', OPTIND, a stage's index) is read
# up to this many digits; past them it is only "larger than any the build has" (and CPython refuses int() of
# thousands of digits).
_MAX_DIGITS = 18


def decimal(text: str) -> int | None:
    """``text`` as a number, when it is written in ASCII digits (``²`` is a digit to Python, not to sh), larger
    ones capped at 10**18; else None."""
    if not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_DIGITS else 10 ** _MAX_DIGITS


def exit_status(text: str) -> int | None:
    """``exit N``/``return N``'s status: N modulo 256 (its last eight digits decide it, as 10**8 % 256 == 0)."""
    return int(text[-8:]) % 256 if text.isascii() and text.isdigit() else None


def plain_text(word: Word) -> str | None:
    """The text of a word made of one unquoted literal (a reserved word, an operator-like word), else None."""
    if len(word) == 1 and isinstance(word[0], Lit) and not word[0].quoted:
        return word[0].text
    return None


# -- the tree --------------------------------------------------------------

@dataclass(frozen=True)
class Redirect:
    """``[N]OP TARGET``; a here-document keeps its body."""

    op: str
    target: Word
    fd: int | None = None
    body: str | None = None  # here-document text
    body_quoted: bool = False  # <<'EOF': no expansion in the body


@dataclass(frozen=True)
class Simple:
    """A simple command: assignments, words, redirections."""

    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    line: int
    text: str  # the command as written, on one line
    # bash's array assignments, NAME=(a b) or NAME+=(c) (the name then ends in '+'), each element a word; as a
    # declaration's argument (declare -a NAME=(...)) the name is among the words too.
    arrays: tuple[tuple[str, tuple[Word, ...]], ...] = ()


@dataclass(frozen=True)
class If:
    """``if`` with its ``elif``s: (condition, body) pairs, then the ``else`` body (or None)."""

    branches: tuple[tuple["Sequence", "Sequence"], ...]
    orelse: "Sequence | None"
    line: int
    text: str


@dataclass(frozen=True)
class For:
    """``for NAME [in WORDS]; do BODY; done``; ``words`` None means ``"$@"``."""

    name: str
    words: tuple[Word, ...] | None
    body: "Sequence"
    line: int
    text: str


@dataclass(frozen=True)
class Loop:
    """``while``/``until`` CONDITION; do BODY; done."""

    until: bool
    condition: "Sequence"
    body: "Sequence"
    line: int
    text: str


@dataclass(frozen=True)
class Case:
    """``case WORD in PATTERNS) BODY;; ... esac``: each item's patterns, body, and how it ends: ``;;`` (the case
    ends), ``;&`` (the next body runs too) or bash's ``;;&`` (the next items' patterns are tried)."""

    subject: Word
    items: tuple[tuple[tuple[Word, ...], "Sequence", str], ...]
    line: int
    text: str


@dataclass(frozen=True)
class Group:
    """``{ ...; }`` (``subshell`` False) or ``( ... )``."""

    body: "Sequence"
    subshell: bool
    line: int
    text: str


@dataclass(frozen=True)
class FunctionDef:
    """``NAME() BODY`` or ``function NAME BODY``."""

    name: str
    body: "Command"
    line: int
    text: str


@dataclass(frozen=True)
class Arithmetic:
    """bash's ``((EXPRESSION))``: it succeeds when the value is not 0."""

    expression: str
    line: int
    text: str


@dataclass(frozen=True)
class Test:
    """One test of ``[[ ]]``: OP ("" for a lone word, a unary test, a binary operator) and its words."""

    op: str
    words: tuple[Word, ...]


@dataclass(frozen=True)
class Logic:
    """``! E``, ``A && B``, ``A || B`` inside ``[[ ]]`` (parentheses only group)."""

    op: str
    parts: tuple[Union[Test, "Logic"], ...]


@dataclass(frozen=True)
class Conditional:
    """bash's ``[[ EXPRESSION ]]``: its tests, whose words are neither split nor globbed."""

    expression: Union[Test, Logic]
    line: int
    text: str


@dataclass(frozen=True)
class ArithmeticFor:
    """bash's ``for ((INIT; CONDITION; STEP)); do BODY; done``."""

    init: str
    condition: str
    step: str
    body: "Sequence"
    line: int
    text: str


Compound = Union[If, For, Loop, Case, Group, Arithmetic, ArithmeticFor, Conditional]


@dataclass(frozen=True)
class Command:
    """A simple or compound command, or a function definition, with the redirections of a compound one."""

    node: Union[Simple, Compound, FunctionDef]
    redirects: tuple[Redirect, ...] = ()

    @property
    def line(self) -> int:
        """Where the command starts."""
        return self.node.line

    @property
    def text(self) -> str:
        """The command as written, on one line."""
        return self.node.text


@dataclass(frozen=True)
class Pipeline:
    """``[!] A | B | ...``."""

    commands: tuple[Command, ...]
    negated: bool = False


@dataclass(frozen=True)
class AndOr:
    """``P1 && P2 || P3 ...``: the first pipeline, then (operator, pipeline) pairs."""

    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...] = ()
    background: bool = False


@dataclass(frozen=True)
class Sequence:
    """Commands run one after the other."""

    items: tuple[AndOr, ...] = field(default=())
