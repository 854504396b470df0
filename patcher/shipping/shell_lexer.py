"""Cut a shell script into tokens: words (with their quoting, parameter expansions, substitutions), operators,
newlines and here-document bodies, as sh (and bash, where it runs the script) reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .shell_nodes import Arith, Lit, Param, Part, ShellSyntaxError, Sub, Word

_OPERATORS = (";;&", "&&", "||", ";;", ";&", "|&", "<<-", "<<<", "<<", ">>", "<&", ">&", "<>", ">|", "&>>", "&>",
              ";", "&", "|", "(", ")", "<", ">")
# Not dash's: it reads '&>' as '&' then '>' (the command runs in the background and the file is emptied),
# and the others as a syntax error.
_BASH_OPERATORS = frozenset({";;&", ";&", "|&", "<<<", "&>>", "&>"})
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDIRECT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")  # what ${!...} names: a variable or $N
_SPECIAL = "@*#?-$!0123456789"
# bash adds ${NAME/PATTERN/STRING} (also //, /#, /%), ${NAME:OFFSET:LENGTH} and the case changes ^^ ^ ,, ,.
_PARAM_OPS = (":-", ":=", ":+", ":?", "##", "%%", "//", "^^", ",,", "-", "=", "+", "?", "#", "%", "/", ":", "^", ",")


@dataclass
class Token:
    kind: str  # "word", "op", "newline", "io", "eof"
    value: str  # operator text, or the raw text of a word
    line: int
    start: int
    end: int
    word: Word = ()
    redirect_body: list[str] | None = None  # filled for << targets once the body is read


_ANSI_C = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\", "'": "'", '"': '"', "?": "?"}
_HEX = "0123456789abcdefABCDEF"


def _ansi_c_escape(text: str, at: int) -> tuple[str, int]:
    """The character the escape at ``text[at]`` (after its backslash) stands for in ``$'...'``, and where it ends.

    A byte past ASCII (``\\xff``, ``\\377``) is kept as Python keeps an undecodable byte (surrogateescape).
    """
    letter = text[at]
    if letter in _ANSI_C:
        return _ANSI_C[letter], at + 1
    digits, base, width = "", 0, 0
    if letter in "01234567":
        base, width, start = 8, 3, at
    elif letter in "xuU":
        base, width, start = 16, {"x": 2, "u": 4, "U": 8}[letter], at + 1
    elif letter == "c" and at + 1 < len(text) and text[at + 1] != "'":
        control = text[at + 1]
        end = at + 3 if control == "\\" and text[at + 2:at + 3] == "\\" else at + 2
        return chr(ord(control.upper()) ^ 0x40) if ord(control) < 128 else control, end
    else:
        return "\\" + letter, at + 1  # not an escape: both characters stay
    allowed = "01234567" if base == 8 else _HEX
    while len(digits) < width and start + len(digits) < len(text) and text[start + len(digits)] in allowed:
        digits += text[start + len(digits)]
    if not digits:
        return "\\" + letter, at + 1
    value = int(digits, base)
    end = start + len(digits)
    if letter in "uU":
        return (chr(value) if value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF else "\\" + text[at:end]), end
    value &= 0xFF  # \777 is one byte, as in bash
    return (chr(value) if value < 0x80 else chr(0xDC00 + value)), end


class Lexer:
    def __init__(self, text: str, first_line: int = 1, bash: bool = False, heredoc_to_end: bool = True,
                 dash: bool = False):
        self.bash = bash
        # dash itself (not the base image's sh, which may be bash): bash's $'...', '&>', '|&', '<<<', ';&' and
        # 'function' are not its own.
        self.dash = dash
        # bash and dash end a here-document at the end of the script when its delimiter never comes (bash with
        # a warning); inside $(...) the delimiter must come before the ')', or the ')' is part of the body.
        self.heredoc_to_end = heredoc_to_end
        self.text = text
        self.pos = 0
        self.line = first_line
        self.tokens: list[Token] = []
        self.pending: list[tuple[Token, bool, bool]] = []  # here-doc delimiters: token, strip tabs, quoted
        self.token_line = first_line

    def run(self) -> list[Token]:
        started = self.line
        try:
            return self._run()
        except ShellSyntaxError as error:
            error.start = min(error.start, self.token_line if self.tokens or self.pos else started)
            raise

    def _run(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            self.token_line = self.line  # where the token read next starts: a quote left open is dated there
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
                self.tokens.append(Token("newline", "\n", self.line, self.pos, self.pos + 1))
                self.pos += 1
                self.line += 1
                self._read_here_documents()
            elif self.bash and text.startswith("((", self.pos) and self._arithmetic():
                pass
            elif self.bash and text.startswith(("<(", ">("), self.pos):
                self._process_substitution()
            else:
                operator = next((op for op in _OPERATORS if text.startswith(op, self.pos)
                                 and (self.bash or op != ";;&") and not (self.dash and op in _BASH_OPERATORS)),
                                None)
                if operator is not None:
                    self.tokens.append(Token("op", operator, self.line, self.pos, self.pos + len(operator)))
                    self.pos += len(operator)
                    if operator in ("<<", "<<-"):
                        self._here_document_delimiter(operator == "<<-")
                else:
                    self._word()
        if self.pending:
            if not self.heredoc_to_end:
                raise ShellSyntaxError("a here-document is not closed", self.line)
            self._read_here_documents()  # each body is empty
        self.tokens.append(Token("eof", "", self.line, len(text), len(text)))
        return self.tokens

    def _arithmetic(self) -> bool:
        """bash's ``((...))`` as one token when its parentheses close together (else two subshells' '(').

        A '(' that never closes is a syntax error either way, raised here: looking again from each of a run of
        them would take time in the square of its length.
        """
        end = self._matching(self.pos + 1, "(", ")")
        if not self.text.startswith(")", end + 1):
            return False
        inner = self.text[self.pos + 2:end]
        self.tokens.append(Token("arith", inner, self.line, self.pos, end + 2))
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
        self.tokens.append(Token("word", self.text[start:self.pos], line, start, self.pos, (sub,)))

    def _word(self) -> None:
        start, line = self.pos, self.line
        parts = self._parts(stop=lambda c: c in " \t\r\n;&|()<>")
        raw = self.text[start:self.pos]
        following = self.text[self.pos:self.pos + 1]
        if raw.isascii() and raw.isdigit() and following in ("<", ">"):
            self.tokens.append(Token("io", raw, line, start, self.pos))
        else:
            self.tokens.append(Token("word", raw, line, start, self.pos, tuple(parts)))

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
                    if self.heredoc_to_end:
                        break
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
                elif self.dash:  # one that ends the text: dash keeps it as a character of the word, bash drops it
                    literal("\\", True)
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("a single quote is not closed", self.line)
                literal(text[self.pos + 1:end], True)  # '' gives an empty quoted literal: a word, not none
                self.line += text.count("\n", self.pos, end)
                self.pos = end + 1
            elif not self.dash and char == "$" and text.startswith("'", self.pos + 1):  # dash: '$', then '...'
                flush()
                literal(self._ansi_c(), True)
            elif self.bash and char == "$" and text.startswith('"', self.pos + 1):
                self.pos += 1  # bash's $"..." (translated by the locale's catalogue: none in a build) is "..."
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
        """bash's ``$'...'``, its escapes decoded as bash 5.2 decodes them (``\\0`` ends the string there)."""
        text = self.text
        self.pos += 2
        out: list[str] = []
        ended = False  # after a \0: bash's strings stop at the first NUL
        while True:
            if self.pos >= len(text):
                raise ShellSyntaxError("a $'...' string is not closed", self.line)
            char = text[self.pos]
            if char == "'":
                self.pos += 1
                return "".join(out)
            if char == "\\" and self.pos + 1 < len(text):
                decoded, self.pos = _ansi_c_escape(text, self.pos + 1)
                ended = ended or decoded == "\0"
            else:
                self.line += char == "\n"
                decoded = char
                self.pos += 1
            if not ended:
                out.append(decoded)

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
        match = NAME.match(text, self.pos + 1)
        if match:
            self.pos = match.end()
            return Param(match.group(0), quoted=quoted)
        self.pos += 1
        return Lit("$", quoted)

    def _braced(self, quoted: bool) -> Part:
        text = self.text
        self.pos += 2
        # ${!NAME} is bash's; dash parses it too, and fails only where it is expanded ("Bad substitution").
        if text.startswith("!", self.pos) and _INDIRECT.match(text, self.pos + 1):
            return self._indirect(quoted)
        length = text.startswith("#", self.pos) and not text.startswith("#}", self.pos)
        if length:
            self.pos += 1
        match = NAME.match(text, self.pos)
        if match:
            name = match.group(0)
            self.pos = match.end()
            if text.startswith("[", self.pos):  # ${BASH_SOURCE[0]}: keep the subscript in the name
                # bash ends it at the ']' that matches, past nested ones: ${a[b[0]]}, ${a[$((b[1]+1))]}
                try:
                    end = self._matching(self.pos, "[", "]")
                except ShellSyntaxError:
                    raise ShellSyntaxError("bad substitution", self.line) from None
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
        return Sub(inner, line, quoted, backquoted=True)

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
