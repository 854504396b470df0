"""Parse POSIX sh (and the bash forms install scripts use) into a tree, keeping each command's line.

Words keep their quoting, so expansion can tell ``"$A"`` from ``$A``:
a word is a tuple of parts (literal text, ``$NAME``/``${NAME...}``,
``$(...)``/backquotes, ``$((...))``), each marked quoted or not. The
grammar is the shell's: lists with ``;``, ``&`` and newlines, ``&&``/``||``,
pipelines with ``!``, simple commands with assignments and redirections
(here-documents included), ``if``/``for``/``while``/``until``/``case``,
``{ ...; }``, ``( ... )`` and function definitions. A script that does not
parse raises ``ShellSyntaxError`` with the line where the parser stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Union

_OPERATORS = ("&&", "||", ";;", ";&", "|&", "<<-", "<<<", "<<", ">>", "<&", ">&", "<>", ">|", "&>>", "&>",
              ";", "&", "|", "(", ")", "<", ">")
_REDIRECTS = ("<<-", "<<<", "<<", ">>", "<&", ">&", "<>", ">|", "&>>", "&>", "<", ">")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until",
                       "for", "in", "{", "}", "!", "function"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDIRECT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")  # what ${!...} names: a variable or $N
_SPECIAL = "@*#?-$!0123456789"
# bash adds ${NAME/PATTERN/STRING} (also //, /#, /%), ${NAME:OFFSET:LENGTH} and the case changes ^^ ^ ,, ,.
_PARAM_OPS = (":-", ":=", ":+", ":?", "##", "%%", "//", "^^", ",,", "-", "=", "+", "?", "#", "%", "/", ":", "^", ",")


class ShellSyntaxError(Exception):
    """The script does not parse: where, and why."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.message = message
        self.line = line


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
    """``case WORD in PATTERNS) BODY;; ... esac``: each item's patterns, body, and whether it ends ``;&`` (falls through)."""

    subject: Word
    items: tuple[tuple[tuple[Word, ...], "Sequence", bool], ...]
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
class ArithmeticFor:
    """bash's ``for ((INIT; CONDITION; STEP)); do BODY; done``."""

    init: str
    condition: str
    step: str
    body: "Sequence"
    line: int
    text: str


Compound = Union[If, For, Loop, Case, Group, Arithmetic, ArithmeticFor]


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


# -- the lexer -------------------------------------------------------------

@dataclass
class _Token:
    kind: str  # "word", "op", "newline", "io", "eof"
    value: str  # operator text, or the raw text of a word
    line: int
    start: int
    end: int
    word: Word = ()
    redirect_body: list[str] | None = None  # filled for << targets once the body is read


class _Lexer:
    def __init__(self, text: str, first_line: int = 1, bash: bool = False):
        self.bash = bash
        self.text = text
        self.pos = 0
        self.line = first_line
        self.tokens: list[_Token] = []
        self.pending: list[tuple[_Token, bool, bool]] = []  # here-doc delimiters: token, strip tabs, quoted

    def run(self) -> list[_Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r":
                self.pos += 1
            elif char == "\\" and text.startswith("\n", self.pos + 1):
                self.pos += 2
                self.line += 1
            elif char == "#":
                while self.pos < len(text) and text[self.pos] != "\n":
                    self.pos += 1
            elif char == "\n":
                self.tokens.append(_Token("newline", "\n", self.line, self.pos, self.pos + 1))
                self.pos += 1
                self.line += 1
                self._read_here_documents()
            elif self.bash and text.startswith("((", self.pos) and self._arithmetic():
                pass
            elif self.bash and text.startswith(("<(", ">("), self.pos):
                self._process_substitution()
            else:
                operator = next((op for op in _OPERATORS if text.startswith(op, self.pos)), None)
                if operator is not None:
                    self.tokens.append(_Token("op", operator, self.line, self.pos, self.pos + len(operator)))
                    self.pos += len(operator)
                    if operator in ("<<", "<<-"):
                        self._here_document_delimiter(operator == "<<-")
                else:
                    self._word()
        if self.pending:
            raise ShellSyntaxError("a here-document is not closed", self.line)
        self.tokens.append(_Token("eof", "", self.line, len(text), len(text)))
        return self.tokens

    def _arithmetic(self) -> bool:
        """bash's ``((...))`` as one token when its parentheses close together (else two subshells' '(')."""
        try:
            end = self._matching(self.pos + 1, "(", ")")
        except ShellSyntaxError:
            return False
        if not self.text.startswith(")", end + 1):
            return False
        inner = self.text[self.pos + 2:end]
        self.tokens.append(_Token("arith", inner, self.line, self.pos, end + 2))
        self.line += inner.count("\n")
        self.pos = end + 2
        return True

    def _process_substitution(self) -> None:
        """bash's ``<(...)`` or ``>(...)``: a word of its own (``diff <(a) <(b)``, ``done < <(find ...)``)."""
        start, line = self.pos, self.line
        end = self._matching(self.pos + 1, "(", ")")
        inner = self.text[self.pos + 2:end]
        self.line += inner.count("\n")
        self.pos = end + 1
        sub = Sub(inner, line, process=self.text[start])
        self.tokens.append(_Token("word", self.text[start:self.pos], line, start, self.pos, (sub,)))

    def _word(self) -> None:
        start, line = self.pos, self.line
        parts = self._parts(stop=lambda c: c in " \t\r\n;&|()<>")
        raw = self.text[start:self.pos]
        following = self.text[self.pos:self.pos + 1]
        if raw.isdigit() and following in ("<", ">"):
            self.tokens.append(_Token("io", raw, line, start, self.pos))
        else:
            self.tokens.append(_Token("word", raw, line, start, self.pos, tuple(parts)))

    def _here_document_delimiter(self, strip: bool) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        if self.pos >= len(self.text) or self.text[self.pos] == "\n":
            raise ShellSyntaxError("'<<' needs a delimiter", self.line)
        self._word()
        token = self.tokens[-1]
        quoted = any(c in token.value for c in "'\"\\")
        self.pending.append((token, strip, quoted))

    def _read_here_documents(self) -> None:
        for token, strip, quoted in self.pending:
            delimiter = "".join(p.text for p in token.word if isinstance(p, Lit))
            body: list[str] = []
            while True:
                if self.pos >= len(self.text):
                    raise ShellSyntaxError(f"here-document '{delimiter}' is not closed", token.line)
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                raw = self.text[self.pos:end].rstrip("\r")
                self.pos = min(end + 1, len(self.text))
                self.line += 1
                check = raw.lstrip("\t") if strip else raw
                if check == delimiter:
                    break
                body.append(check)
            token.redirect_body = body
            token.kind = "heredoc-quoted" if quoted else "heredoc"
        self.pending = []

    def _parts(self, stop: Callable[[str], bool], quoted: bool = False) -> list[Part]:
        """Read word parts until ``stop(char)`` holds outside quotes (or the text ends)."""
        text = self.text
        parts: list[Part] = []
        buffer: list[str] = []
        buffer_quoted = quoted

        def flush() -> None:
            if buffer:
                parts.append(Lit("".join(buffer), buffer_quoted))
                buffer.clear()

        def literal(value: str, is_quoted: bool) -> None:
            nonlocal buffer_quoted
            if buffer and buffer_quoted != is_quoted:
                flush()
            buffer_quoted = is_quoted
            buffer.append(value)

        while self.pos < len(text):
            char = text[self.pos]
            if stop(char):
                break
            if char == "\\":
                following = text[self.pos + 1:self.pos + 2]
                self.pos += 2
                if following == "\n":
                    self.line += 1
                elif following:
                    literal(following, True)
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("a single quote is not closed", self.line)
                literal(text[self.pos + 1:end], True)  # '' gives an empty quoted literal: a word, not none
                self.line += text.count("\n", self.pos, end)
                self.pos = end + 1
            elif char == "$" and text.startswith("'", self.pos + 1):
                flush()
                literal(self._ansi_c(), True)
            elif char == '"':
                self.pos += 1
                flush()
                inner = self._double_quoted()
                parts.extend(inner or [Lit("", True)])
            elif char == "$":
                flush()
                parts.append(self._dollar(quoted))
            elif char == "`":
                flush()
                parts.append(self._backquote(quoted))
            else:
                if char == "\n":
                    self.line += 1
                literal(char, quoted)
                self.pos += 1
        flush()
        return parts

    def _double_quoted(self, heredoc: bool = False) -> list[Part]:
        """The parts of a double-quoted string (or, ``heredoc``, of a here-document body up to the end)."""
        text = self.text
        parts: list[Part] = []
        buffer: list[str] = []
        escapable = ("\\", "$", "`", "\n") if heredoc else ('"', "\\", "$", "`", "\n")
        while True:
            if self.pos >= len(text):
                if heredoc:
                    break
                raise ShellSyntaxError("a double quote is not closed", self.line)
            char = text[self.pos]
            if char == '"' and not heredoc:
                self.pos += 1
                break
            if char == "\\" and text[self.pos + 1:self.pos + 2] in escapable and text[self.pos + 1:self.pos + 2]:
                if text[self.pos + 1] == "\n":
                    self.line += 1
                else:
                    buffer.append(text[self.pos + 1])
                self.pos += 2
            elif char in "$`":
                if buffer:
                    parts.append(Lit("".join(buffer), True))
                    buffer = []
                parts.append(self._dollar(True) if char == "$" else self._backquote(True))
            else:
                if char == "\n":
                    self.line += 1
                buffer.append(char)
                self.pos += 1
        if buffer:
            parts.append(Lit("".join(buffer), True))
        return parts

    def _ansi_c(self) -> str:
        text = self.text
        self.pos += 2
        out: list[str] = []
        escapes = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "a": "\a", "r": "\r", "e": "\x1b"}
        while True:
            if self.pos >= len(text):
                raise ShellSyntaxError("a $'...' string is not closed", self.line)
            char = text[self.pos]
            if char == "'":
                self.pos += 1
                return "".join(out)
            if char == "\\" and self.pos + 1 < len(text):
                out.append(escapes.get(text[self.pos + 1], "\\" + text[self.pos + 1]))
                self.pos += 2
            else:
                self.line += char == "\n"
                out.append(char)
                self.pos += 1

    def _dollar(self, quoted: bool) -> Part:
        text = self.text
        line = self.line
        if text.startswith("$((", self.pos):
            end = self._matching(self.pos + 1, "(", ")")
            inner = text[self.pos + 3:end - 1]
            self.line += inner.count("\n")
            self.pos = end + 1
            return Arith(inner, quoted)
        if text.startswith("$(", self.pos):
            end = self._matching(self.pos + 1, "(", ")")
            inner = text[self.pos + 2:end]
            self.line += inner.count("\n")
            self.pos = end + 1
            return Sub(inner, line, quoted)
        if text.startswith("${", self.pos):
            return self._braced(quoted)
        following = text[self.pos + 1:self.pos + 2]
        if following and following in _SPECIAL:
            self.pos += 2
            return Param(following, quoted=quoted)
        match = _NAME.match(text, self.pos + 1)
        if match:
            self.pos = match.end()
            return Param(match.group(0), quoted=quoted)
        self.pos += 1
        return Lit("$", quoted)

    def _braced(self, quoted: bool) -> Part:
        text = self.text
        self.pos += 2
        if self.bash and text.startswith("!", self.pos) and _INDIRECT.match(text, self.pos + 1):
            return self._indirect(quoted)
        length = text.startswith("#", self.pos) and not text.startswith("#}", self.pos)
        if length:
            self.pos += 1
        match = _NAME.match(text, self.pos)
        if match:
            name = match.group(0)
            self.pos = match.end()
            if text.startswith("[", self.pos):  # ${BASH_SOURCE[0]}: keep the subscript in the name
                end = text.find("]", self.pos)
                if end < 0:
                    raise ShellSyntaxError("bad substitution", self.line)
                name += text[self.pos:end + 1]
                self.pos = end + 1
        elif self.pos < len(text) and text[self.pos] in _SPECIAL:
            name = text[self.pos]
            self.pos += 1
            while name.isdigit() and self.pos < len(text) and text[self.pos].isdigit():
                name += text[self.pos]
                self.pos += 1
        else:
            raise ShellSyntaxError("bad substitution", self.line)
        if length:
            if not text.startswith("}", self.pos):
                raise ShellSyntaxError("bad substitution", self.line)
            self.pos += 1
            return Param(name, "len", None, quoted)
        if text.startswith("}", self.pos):
            self.pos += 1
            return Param(name, "", None, quoted)
        op = next((o for o in _PARAM_OPS if text.startswith(o, self.pos)), None)
        if op is None:
            raise ShellSyntaxError("bad substitution", self.line)
        self.pos += len(op)
        replacement: list[Part] = []
        if op in ("/", "//"):
            if op == "/" and text[self.pos:self.pos + 1] in ("#", "%"):  # anchored at the start or the end
                op += text[self.pos]
                self.pos += 1
            arg = self._parts(stop=lambda c: c in "/}")  # a pattern, even inside "...": only its own quotes quote
            if text.startswith("/", self.pos):
                self.pos += 1
                replacement = self._parts(stop=lambda c: c == "}", quoted=quoted)
        else:
            arg = self._parts(stop=lambda c: c == "}", quoted=quoted and op not in ("#", "##", "%", "%%"))
        if not text.startswith("}", self.pos):
            raise ShellSyntaxError("a '${' is not closed", self.line)
        self.pos += 1
        return Param(name, op, tuple(arg), quoted, tuple(replacement))

    def _indirect(self, quoted: bool) -> Part:
        """bash's ``${!NAME}`` (op "indirect": the variable NAME names), ``${!NAME[@]}`` (op "indices") and
        ``${!PREFIX*}`` (op "names": the variables whose names start so)."""
        match = _INDIRECT.match(self.text, self.pos + 1)
        assert match is not None  # _braced looked
        name, self.pos, op = match.group(0), match.end(), "indirect"
        for tail, found in (("[@]}", "indices"), ("[*]}", "indices"), ("@}", "names"), ("*}", "names"), ("}", op)):
            if self.text.startswith(tail, self.pos):
                self.pos += len(tail)
                return Param(name + tail[:-1] if found == "indices" else name, found, None, quoted)
        raise ShellSyntaxError("bad substitution", self.line)

    def _backquote(self, quoted: bool) -> Part:
        text = self.text
        line = self.line
        index = self.pos + 1
        out: list[str] = []
        while True:
            if index >= len(text):
                raise ShellSyntaxError("a backquote is not closed", self.line)
            char = text[index]
            if char == "`":
                break
            if char == "\\" and text[index + 1:index + 2] in ("`", "\\", "$"):
                out.append(text[index + 1])
                index += 2
                continue
            out.append(char)
            index += 1
        inner = "".join(out)
        self.line += inner.count("\n")
        self.pos = index + 1
        return Sub(inner, line, quoted)

    def _matching(self, index: int, opening: str, closing: str) -> int:
        """The index of the ``closing`` that matches the ``opening`` at ``index``, skipping quotes."""
        text = self.text
        depth = 0
        while index < len(text):
            char = text[index]
            if char == "\\":
                index += 2
                continue
            if char == "'":
                end = text.find("'", index + 1)
                if end < 0:
                    break
                index = end + 1
                continue
            if char == '"':
                index += 1
                while index < len(text) and text[index] != '"':
                    index += 2 if text[index] == "\\" else 1
                index += 1
                continue
            if char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
                if depth == 0:
                    return index
            index += 1
        raise ShellSyntaxError(f"a '{opening}' is not closed", self.line)


# -- the parser ------------------------------------------------------------

def heredoc_word(body: str) -> Word:
    """An unquoted here-document's body as one word: ``$`` and backquotes expand, ``\\`` escapes only ``$ ` \\``."""
    return tuple(_Lexer(body)._double_quoted(heredoc=True))


def parse_script(text: str, first_line: int = 1, bash: bool = False) -> Sequence:
    """Parse a whole script (or a ``sh -c`` string, a RUN line, a command substitution).

    ``bash``: bash runs it, so ``NAME=(a b)`` is an array assignment (a syntax error for dash).
    """
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    tokens = _Lexer(text, first_line, bash).run()
    return _Parser(tokens, text, bash).program()


class _Parser:
    def __init__(self, tokens: list[_Token], text: str, bash: bool = False):
        self.tokens = tokens
        self.text = text
        self.bash = bash
        self.index = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.index]

    def _advance(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _is_word(self, *values: str) -> bool:
        token = self.token
        return token.kind == "word" and plain_text(token.word) in values

    def _is_op(self, *values: str) -> bool:
        return self.token.kind == "op" and self.token.value in values

    def _expect_word(self, value: str) -> None:
        if not self._is_word(value):
            found = self.token.value.strip() or "the end"
            raise ShellSyntaxError(f"expected '{value}', found '{found}'", self.token.line)
        self._advance()

    def _linebreak(self) -> None:
        while self.token.kind == "newline":
            self._advance()

    def _text(self, start: int, end: int) -> str:
        text = " ".join(self.text[start:end].replace("\\\n", "").split())  # continued lines joined, as sh reads them
        return text if len(text) <= 120 else text[:117] + "..."

    def program(self) -> Sequence:
        sequence = self.sequence(())
        if self.token.kind != "eof":
            raise ShellSyntaxError(f"unexpected '{self.token.value.strip()}'", self.token.line)
        return sequence

    def sequence(self, ends: tuple[str, ...]) -> Sequence:
        """Commands until one of the reserved words (or operators) ``ends`` starts a token."""
        items: list[AndOr] = []
        while True:
            self._linebreak()
            if self.token.kind == "eof" or self._is_word(*ends) or self._is_op(*ends):
                return Sequence(tuple(items))
            if self._is_op(";;", ";&"):
                return Sequence(tuple(items))
            item = self.and_or()
            if self._is_op("&"):
                self._advance()
                item = AndOr(item.first, item.rest, True)
            elif self._is_op(";"):
                self._advance()
            elif self.token.kind not in ("newline", "eof") and not self._is_word(*ends) and not self._is_op(*ends, ";;", ";&"):
                raise ShellSyntaxError(f"unexpected '{self.token.value.strip()}'", self.token.line)
            items.append(item)

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self._is_op("&&", "||"):
            operator = self._advance().value
            self._linebreak()
            rest.append((operator, self.pipeline()))
        return AndOr(first, tuple(rest))

    def pipeline(self) -> Pipeline:
        negated = False
        if self._is_word("!"):
            self._advance()
            negated = True
        commands = [self.command()]
        while self._is_op("|", "|&"):
            self._advance()
            self._linebreak()
            commands.append(self.command())
        return Pipeline(tuple(commands), negated)

    def command(self) -> Command:
        token = self.token
        start = token.start
        if token.kind == "word":
            keyword = plain_text(token.word)
            if keyword == "if":
                node: Union[Simple, Compound, FunctionDef] = self._if(start)
            elif keyword == "for":
                node = self._for(start)
            elif keyword in ("while", "until"):
                node = self._loop(start, keyword == "until")
            elif keyword == "case":
                node = self._case(start)
            elif keyword == "{":
                self._advance()
                body = self.sequence(("}",))
                self._expect_word("}")
                node = Group(body, False, token.line, self._text(start, self.tokens[self.index - 1].end))
            elif keyword == "function":
                return self._function(start, keyword=True)
            elif (keyword is not None and _NAME.fullmatch(keyword) and self.tokens[self.index + 1].kind == "op"
                  and self.tokens[self.index + 1].value == "(" and self.tokens[self.index + 2].kind == "op"
                  and self.tokens[self.index + 2].value == ")"):
                return self._function(start, keyword=False)
            elif keyword in _RESERVED and keyword not in ("!",):
                raise ShellSyntaxError(f"unexpected '{keyword}'", token.line)
            else:
                return Command(self._simple())
            return Command(node, self._redirects())
        if token.kind == "arith":
            self._advance()
            return Command(Arithmetic(token.value, token.line, self._text(start, token.end)), self._redirects())
        if self._is_op("("):
            self._advance()
            body = self.sequence((")",))
            if not self._is_op(")"):
                raise ShellSyntaxError("a '(' is not closed", token.line)
            self._advance()
            group = Group(body, True, token.line, self._text(start, self.tokens[self.index - 1].end))
            return Command(group, self._redirects())
        if token.kind in ("io",) or (token.kind == "op" and token.value in _REDIRECTS):
            return Command(self._simple())
        found = token.value.strip() or "the end"
        raise ShellSyntaxError(f"expected a command, found '{found}'", token.line)

    def _redirect(self) -> Redirect:
        fd = None
        if self.token.kind == "io":
            fd = int(self._advance().value)
        operator = self._advance().value
        target = self.token
        if target.kind not in ("word", "heredoc", "heredoc-quoted"):
            raise ShellSyntaxError(f"'{operator}' needs a target", target.line)
        self._advance()
        if target.kind.startswith("heredoc"):
            body = "\n".join(target.redirect_body or []) + ("\n" if target.redirect_body else "")
            return Redirect(operator, target.word, fd, body, target.kind == "heredoc-quoted")
        return Redirect(operator, target.word, fd)

    def _redirects(self) -> tuple[Redirect, ...]:
        found = []
        while self.token.kind == "io" or (self.token.kind == "op" and self.token.value in _REDIRECTS):
            found.append(self._redirect())
        return tuple(found)

    def _simple(self) -> Simple:
        first = self.token
        assignments: list[tuple[str, Word]] = []
        arrays: list[tuple[str, tuple[Word, ...]]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        end = first.end
        testing = False  # inside [[ ... ]]: && || ( ) < > are operands of the test, up to the closing ]]
        while True:
            token = self.token
            if testing and token.kind == "op" and token.value in ("&&", "||", "(", ")", "<", ">"):
                words.append((Lit(token.value, True),))
                self._advance()
                end = token.end
            elif token.kind == "io" or (token.kind == "op" and token.value in _REDIRECTS):
                redirects.append(self._redirect())
                end = self.tokens[self.index - 1].end
            elif token.kind == "word":
                declaring = len(words) > 0 and plain_text(words[0]) in DECLARATIONS
                assignment = split_assignment(token.word) if not words or declaring else None
                following = self.tokens[self.index + 1]
                if self.bash and assignment is not None and not assignment[1] and following.kind == "op" and \
                        following.value == "(" and following.start == token.end:
                    # bash's array assignment, NAME=(a b c), also as a declaration's argument (local -a NAME=(...)).
                    self._advance()
                    arrays.append((assignment[0], self._array_elements()))
                    if declaring:
                        words.append((Lit(assignment[0].rstrip("+")),))
                    end = self.tokens[self.index - 1].end
                    continue
                if declaring:
                    assignment = None  # a declaration's NAME=VALUE argument is a word (run_simple expands it)
                element = split_element_assignment(token.word) if self.bash and not words and not assignment \
                    else None
                if element is not None:  # bash's NAME[SUBSCRIPT]=value: one element of an array
                    name, subscript, value = element
                    assignment = (f"{name.rstrip('+')}[{subscript}]{'+' if name.endswith('+') else ''}", value)
                if assignment is not None:
                    assignments.append(assignment)
                else:
                    words.append(token.word)
                    keyword = plain_text(token.word)
                    testing = keyword == "[[" if len(words) == 1 else testing and keyword != "]]"
                self._advance()
                end = token.end
            else:
                break
        if not assignments and not words and not redirects and not arrays:
            raise ShellSyntaxError(f"expected a command, found '{self.token.value.strip() or 'the end'}'", first.line)
        return Simple(tuple(assignments), tuple(words), tuple(redirects), first.line, self._text(first.start, end),
                      tuple(arrays))

    def _array_elements(self) -> tuple[Word, ...]:
        """The words of ``(a b c)`` after ``NAME=``, up to its ``)`` (lines between them allowed)."""
        opened = self._advance().line  # the '('
        elements: list[Word] = []
        while not self._is_op(")"):
            token = self.token
            if token.kind == "newline":
                self._advance()
                continue
            if token.kind == "eof":  # bash names the line the '(' opened on
                raise ShellSyntaxError("unexpected 'end of file' in an array", opened)
            if token.kind != "word":
                raise ShellSyntaxError(f"unexpected '{token.value.strip()}' in an array", token.line)
            elements.append(token.word)
            self._advance()
        self._advance()  # the ')'
        return tuple(elements)

    def _if(self, start: int) -> If:
        line = self.token.line
        self._advance()
        branches = []
        condition = self.sequence(("then",))
        self._expect_word("then")
        body = self.sequence(("elif", "else", "fi"))
        branches.append((condition, body))
        orelse = None
        while True:
            if self._is_word("elif"):
                self._advance()
                condition = self.sequence(("then",))
                self._expect_word("then")
                branches.append((condition, self.sequence(("elif", "else", "fi"))))
            elif self._is_word("else"):
                self._advance()
                orelse = self.sequence(("fi",))
            else:
                self._expect_word("fi")
                break
        return If(tuple(branches), orelse, line, self._text(start, self.tokens[self.index - 1].end))

    def _for(self, start: int) -> For | ArithmeticFor:
        line = self.token.line
        self._advance()
        if self.token.kind == "arith":
            clauses = self._advance().value.split(";")
            if len(clauses) != 3:
                raise ShellSyntaxError("'for ((' needs three expressions", line)
            body = self._do_group()
            init, condition, step = clauses
            return ArithmeticFor(init, condition, step, body, line, self._text(start, self.tokens[self.index - 1].end))
        name = plain_text(self.token.word) if self.token.kind == "word" else None
        if name is None or not _NAME.fullmatch(name):
            raise ShellSyntaxError("'for' needs a variable name", line)
        self._advance()
        words: list[Word] | None = None
        self._linebreak()
        if self._is_word("in"):
            self._advance()
            words = []
            while self.token.kind == "word":
                words.append(self._advance().word)
        body = self._do_group()
        return For(name, None if words is None else tuple(words), body, line,
                   self._text(start, self.tokens[self.index - 1].end))

    def _do_group(self) -> Sequence:
        """A for loop's ``[;] do BODY done``."""
        if self._is_op(";"):
            self._advance()
        self._linebreak()
        self._expect_word("do")
        body = self.sequence(("done",))
        self._expect_word("done")
        return body

    def _loop(self, start: int, until: bool) -> Loop:
        line = self.token.line
        self._advance()
        condition = self.sequence(("do",))
        self._expect_word("do")
        body = self.sequence(("done",))
        self._expect_word("done")
        return Loop(until, condition, body, line, self._text(start, self.tokens[self.index - 1].end))

    def _case(self, start: int) -> Case:
        line = self.token.line
        self._advance()
        if self.token.kind != "word":
            raise ShellSyntaxError("'case' needs a word", line)
        subject = self._advance().word
        self._linebreak()
        self._expect_word("in")
        items = []
        while True:
            self._linebreak()
            if self._is_word("esac"):
                self._advance()
                break
            if self._is_op("("):
                self._advance()
            patterns = []
            while True:
                if self.token.kind != "word":
                    raise ShellSyntaxError("a case pattern is missing", self.token.line)
                patterns.append(self._advance().word)
                if self._is_op("|"):
                    self._advance()
                    continue
                break
            if not self._is_op(")"):
                raise ShellSyntaxError("a case pattern needs ')'", self.token.line)
            self._advance()
            body = self.sequence(("esac",))
            items.append((tuple(patterns), body, self._is_op(";&")))
            if self._is_op(";;", ";&"):
                self._advance()
            elif not self._is_word("esac"):
                raise ShellSyntaxError("expected ';;' or 'esac'", self.token.line)
        return Case(subject, tuple(items), line, self._text(start, self.tokens[self.index - 1].end))

    def _function(self, start: int, keyword: bool) -> Command:
        line = self.token.line
        if keyword:
            self._advance()
        name = plain_text(self._advance().word) or ""
        if self._is_op("("):
            self._advance()
            if not self._is_op(")"):
                raise ShellSyntaxError("expected ')' after '('", line)
            self._advance()
        self._linebreak()
        body = self.command()
        return Command(FunctionDef(name, body, line, self._text(start, self.tokens[self.index - 1].end)))


def split_element_assignment(word: Word) -> tuple[str, str, Word] | None:
    """bash's ``NAME[SUBSCRIPT]=value``: the name (with a ``+`` for ``+=``), the subscript as written (``$i``
    kept), the value's parts."""
    head = ""
    for index, part in enumerate(word):
        if isinstance(part, Param) and part.op == "" and not part.quoted and head:
            head += f"${part.name}"
            continue
        if not isinstance(part, Lit) or part.quoted:
            return None
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\[([^\]]*)\](\+?)=", head + part.text)
        if match:
            rest = (head + part.text)[match.end():]
            value: list[Part] = [Lit(rest, False)] if rest else []
            return match.group(1) + match.group(3), match.group(2), tuple(value) + word[index + 1:]
        head += part.text
        if "=" in head or "]" in head:
            return None
    return None


def split_assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=value`` as a command prefix: the name, and the value's parts."""
    if not word or not isinstance(word[0], Lit) or word[0].quoted:
        return None
    head = word[0].text
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=", head)
    if not match:
        return None
    rest = head[match.end():]
    value: list[Part] = [Lit(rest, False)] if rest else []
    value.extend(word[1:])
    return match.group(1) + match.group(2), tuple(value)
