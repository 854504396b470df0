"""Split a Dockerfile into instructions and process their words as BuildKit does.

Instructions: parser directives at the top (``# escape=`` changes the
line-continuation character), comments, continuation lines (comment and
empty lines inside one are dropped), here-documents after ``RUN``,
``COPY`` and ``ADD`` (``<<EOF``, ``<<-EOF``, ``<<"EOF"``), and leading
``--flag=value`` options. Words: BuildKit's shell-like lexer
(``frontend/dockerfile/shell/lex.go``): single and double quotes, the
escape character, ``$VAR``, ``${VAR}``, ``${VAR:-word}``, ``${VAR-word}``,
``${VAR:+word}``, ``${VAR+word}``, ``${VAR:?msg}``, ``#``/``%`` trims and
``/`` replacement (``ProcessWord``: no splitting; COPY, ADD and FROM are
split on blanks before it). RUN's shell form is never substituted here:
its shell does that.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from typing import Callable

from ..depth import data_nesting_problem
from ..errors import ShippingError

KEYWORDS = frozenset({"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                      "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"})
_DIRECTIVES = frozenset({"syntax", "escape", "check"})  # BuildKit's; any other name is a plain comment
_DIRECTIVE = re.compile(r"^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$")
HEREDOC = re.compile(r"<<(-?)(['\"]?)([A-Za-z0-9_.-]+)\2")
_FLAG = re.compile(r"--([a-z][a-z0-9-]*)(?:=(\S*))?")


@dataclass(frozen=True)
class Heredoc:
    """A here-document of an instruction: its name, body, and whether ``<<"EOF"`` quoted it."""

    name: str
    body: str
    quoted: bool
    strip_tabs: bool


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction."""

    keyword: str  # upper case
    flags: tuple[tuple[str, str | None], ...]  # (name, value) of each leading --flag
    arguments: str  # the rest, continuation lines joined
    line: int  # 1-based, where it starts
    shell_text: str  # RUN: the command with its line breaks kept, so the shell reader numbers lines right
    heredocs: tuple[Heredoc, ...] = ()

    @property
    def text(self) -> str:
        """The instruction on one line, as written (continuations joined, blanks collapsed)."""
        flags = "".join(f" --{name}" + (f"={value}" if value is not None else "") for name, value in self.flags)
        text = " ".join(f"{self.keyword}{flags} {self.arguments}".split())
        return text if len(text) <= 120 else text[:117] + "..."

    def flag(self, name: str) -> str | None:
        """The value of ``--name=value`` (the last one), or None."""
        found = [value for flag, value in self.flags if flag == name]
        return found[-1] if found else None

    def exec_form(self) -> list[str] | None:
        """The JSON array form (``RUN ["a", "b"]``), or None when the arguments are not one."""
        text = self.arguments.strip()
        if not text.startswith("[") or data_nesting_problem(text) is not None:
            return None  # a shell command, or JSON nested too deep to be a list of words (json recurses per level)
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None  # not JSON: BuildKit takes it as the shell form
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        return None


def read_instructions(text: str, where: str = "Dockerfile") -> list[Instruction]:
    """Split ``text`` into instructions, raising ShippingError where ``docker build`` would refuse it."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    escape = "\\"
    index = 0
    seen: set[str] = set()
    while index < len(lines):  # parser directives: only before anything else
        match = _DIRECTIVE.match(lines[index].strip())
        if not match or match.group(1).lower() not in _DIRECTIVES:
            break  # a comment, even one shaped like a directive, ends them: what follows is a comment too
        name = match.group(1).lower()
        if name in seen:
            raise _refused(where, index + 1, f"only one {name} parser directive can be used")
        seen.add(name)
        if name == "escape":
            if match.group(2) not in ("\\", "`"):
                raise _refused(where, index + 1, f"the escape directive must be \\ or `, not {match.group(2)!r}")
            escape = match.group(2)
        index += 1
    found: list[Instruction] = []
    while index < len(lines):
        raw = lines[index]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        start = index
        physical = [raw]
        while _continues(physical[-1], escape) and index + 1 < len(lines):
            index += 1
            following = lines[index]
            # Comment and empty lines inside a continued instruction are dropped (kept as a bare escape
            # so the lines after them keep their numbers).
            dropped = not following.strip() or following.strip().startswith("#")
            physical.append(escape if dropped else following)
        index += 1
        kept = [p for n, p in enumerate(physical) if not (n and p == escape)]
        joined = "".join(_strip_escape(p) if n < len(kept) - 1 else p for n, p in enumerate(kept))
        match = re.match(r"\s*(\S+)\s*(.*)", joined, re.DOTALL)
        assert match is not None  # the line is not blank
        keyword, rest = match.group(1).upper(), match.group(2)
        if keyword not in KEYWORDS:
            raise _refused(where, start + 1, f"unknown instruction {match.group(1)!r}")
        flags, arguments = _flags(rest.strip())
        heredocs: list[Heredoc] = []
        heredoc_lines: list[str] = []
        if keyword in ("RUN", "COPY", "ADD") and escape == "\\":
            for found_doc in HEREDOC.finditer(arguments):
                name = found_doc.group(3)
                body, index = _heredoc(lines, index, name, bool(found_doc.group(1)), where, start + 1)
                heredoc_lines += [*body, name]
                heredocs.append(Heredoc(name, "".join(b + "\n" for b in body), bool(found_doc.group(2)),
                                        bool(found_doc.group(1))))
        shell_text = _shell_text(physical, escape, heredoc_lines) if keyword == "RUN" else ""
        found.append(Instruction(keyword, flags, arguments, start + 1, shell_text, tuple(heredocs)))
    return found


def _continues(line: str, escape: str) -> bool:
    stripped = line.rstrip(" \t")
    return stripped.endswith(escape) and not stripped.lstrip().startswith("#")


def _strip_escape(line: str) -> str:
    return line.rstrip(" \t")[:-1]


def _flags(text: str) -> tuple[tuple[tuple[str, str | None], ...], str]:
    flags: list[tuple[str, str | None]] = []
    while True:
        match = _FLAG.match(text)
        if not match or (match.end() < len(text) and not text[match.end()].isspace()):
            return tuple(flags), text
        flags.append((match.group(1), match.group(2)))
        text = text[match.end():].lstrip()


def _heredoc(lines: list[str], index: int, name: str, strip: bool, where: str, line: int) -> tuple[list[str], int]:
    body: list[str] = []
    while index < len(lines):
        current = lines[index].lstrip("\t") if strip else lines[index]
        index += 1
        if current == name:
            return body, index
        body.append(current)
    raise _refused(where, line, f"the here-document {name} is not closed")


def _shell_text(physical: list[str], escape: str, heredoc_lines: list[str]) -> str:
    """A RUN's command with its physical lines kept (continuations as sh reads them), then its here-documents.

    Keeping the line breaks lets the shell reader number a command by its
    own line of the Dockerfile; the keyword and the --flags are cut off
    the first line.
    """
    body = []
    for number, line in enumerate(physical):
        if number and line == escape:
            body.append("\\")
        elif _continues(line, escape):
            body.append(_strip_escape(line) + "\\")
        else:
            body.append(line)
    first = re.sub(r"^\s*\S+", "", body[0], count=1).lstrip()
    _, first = _flags(first)
    return "\n".join([first, *body[1:], *heredoc_lines])


def _refused(where: str, line: int, what: str) -> ShippingError:
    return ShippingError(f"cannot be parsed: line {line}: {what}", where=where,
                         hint="'docker build' refuses it too; fix that line")


# -- words -----------------------------------------------------------------

Lookup = Callable[[str], "str | None"]


class DockerLexer:
    """BuildKit's word processing over one set of variables.

    ``lookup(name)`` gives a value, or None when unset; ``missing(name)``
    says what an unset ``$NAME`` gives (empty, or a marker when only the
    base image could set it).
    """

    def __init__(self, lookup: Lookup, missing: Callable[[str], str], escape: str = "\\"):
        self.lookup = lookup
        self.missing = missing
        self.escape = escape

    def word(self, text: str) -> str:
        """``ProcessWord``: quotes removed, variables substituted, no splitting."""
        return self._until(_Scanner(text), None)

    def _until(self, s: "_Scanner", stop: str | None) -> str:
        result: list[str] = []
        while not s.done():
            char = s.peek()
            if stop is not None and char == stop:
                s.next()
                break
            if char == "'":
                result.append(self._single(s))
            elif char == '"':
                result.append(self._double(s))
            elif char == "$":
                result.append(self._dollar(s))
            else:
                s.next()
                if char == self.escape:
                    if s.done():
                        break
                    char = s.next()
                result.append(char)
        else:
            if stop is not None:
                raise ValueError(f"unexpected end of statement while looking for matching {stop}")
        return "".join(result)

    def _single(self, s: "_Scanner") -> str:
        s.next()
        out: list[str] = []
        while True:
            if s.done():
                raise ValueError("unexpected end of statement while looking for matching single-quote")
            char = s.next()
            if char == "'":
                return "".join(out)
            out.append(char)

    def _double(self, s: "_Scanner") -> str:
        s.next()
        out: list[str] = []
        while True:
            if s.done():
                raise ValueError("unexpected end of statement while looking for matching double-quote")
            char = s.peek()
            if char == '"':
                s.next()
                return "".join(out)
            if char == "$":
                out.append(self._dollar(s))
                continue
            s.next()
            if char == self.escape and not s.done() and s.peek() in ('"', "$", self.escape):
                char = s.next()
            out.append(char)

    def _dollar(self, s: "_Scanner") -> str:
        s.next()
        if s.peek() != "{":
            name = s.name()
            if not name:
                return "$"
            value = self.lookup(name)
            return value if value is not None else self.missing(name)
        s.next()
        if s.done() or s.peek() in "{}:":
            raise ValueError("syntax error: bad substitution")
        name = s.name()
        if s.done():
            raise ValueError("syntax error: missing '}'")
        op = s.next()
        if op == "}":
            value = self.lookup(name)
            return value if value is not None else self.missing(name)
        colon = op == ":"
        if colon:
            op = s.next() if not s.done() else ""
        if op in "+-?#%" and op:
            argument = self._until(s, "}")
            value = self.lookup(name)
            unset = value is None or (colon and value == "")
            if op == "-":
                return argument if unset else value  # type: ignore[return-value]
            if op == "+":
                return "" if unset else argument
            if op == "?":
                if unset:
                    raise ValueError(f"{name}: {argument or 'is not allowed to be unset'}")
                return value  # type: ignore[return-value]
            if value is None:
                return ""
            greedy = argument.startswith(op)
            pattern = argument[1:] if greedy else argument
            spans = range(len(value) + 1)
            if op == "#":
                cuts = [i for i in spans if fnmatch.fnmatchcase(value[:i], pattern)]
                return value[(max(cuts) if greedy else min(cuts)):] if cuts else value
            cuts = [i for i in spans if fnmatch.fnmatchcase(value[i:], pattern)]
            return value[:(min(cuts) if greedy else max(cuts))] if cuts else value
        if op == "/" and not colon:
            every = s.peek() == "/"
            if every:
                s.next()
            pattern = self._until(s, "/")
            replacement = self._until(s, "}")
            value = self.lookup(name) or ""
            return value.replace(pattern, replacement) if every else value.replace(pattern, replacement, 1)
        raise ValueError(f"unsupported modifier ({':' if colon else ''}{op}) in substitution")


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def done(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def next(self) -> str:
        char = self.peek()
        self.pos += 1
        return char

    def name(self) -> str:
        """A variable name (letters, digits, ``_``), a run of digits, or one special parameter."""
        start = self.pos
        if self.peek().isdigit():
            while self.peek().isdigit():
                self.pos += 1
            return self.text[start:self.pos]
        if self.peek() and self.peek() in "@*#?-$!0":
            self.pos += 1
            return self.text[start:self.pos]
        while self.peek() and (self.peek().isalnum() or self.peek() == "_"):
            self.pos += 1
        return self.text[start:self.pos]


def env_pairs(text: str, lexer: DockerLexer) -> list[tuple[str, str]]:
    """``ENV``/``LABEL`` arguments: ``a=b c="d e"`` pairs, or the old ``ENV key value with blanks`` form."""
    parts = _split_keeping_quotes(text)
    if parts and "=" not in parts[0]:
        key, _, value = text.strip().partition(" ")
        return [(key, lexer.word(value.strip()))]
    pairs = []
    for part in parts:
        key, equals, value = part.partition("=")
        if not equals or not key:
            raise ValueError(f"{part!r} is not NAME=VALUE")
        pairs.append((key, lexer.word(value)))
    return pairs


def _split_keeping_quotes(text: str) -> list[str]:
    """Split on blanks outside quotes, keeping the quotes (BuildKit's ``parseWords``)."""
    words: list[str] = []
    current: list[str] = []
    quote = ""
    escaped = False
    for char in text.strip():
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "'\"":
            current.append(char)
            quote = char
        elif char.isspace():
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words


def split_arguments(text: str) -> list[str]:
    """COPY/ADD/FROM arguments in the shell form: split on blanks first (quotes do not group), as BuildKit does."""
    return text.split()


def json_or_words(instruction: Instruction) -> tuple[list[str], bool]:
    """The arguments of COPY/ADD: the JSON array's items, or the blank-separated words; and which form it was."""
    exec_form = instruction.exec_form()
    if exec_form is not None:
        return exec_form, True
    return split_arguments(instruction.arguments), False

