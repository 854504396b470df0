"""Follow an install script far enough to know which file it copies where.

Not a shell: it understands what vendor install scripts do to place files
(``cd``, ``cp``, ``cp -r``, ``install``, ``VAR=value`` with ``$VAR``,
``${VAR}`` and ``${VAR:-default}``, ``for X in ...; do ... done`` over
candidate roots (nested too), ``if`` blocks,
``&&``/``||``/``;`` and redirections, ``pushd``/``popd``, and the
``$(dirname "$0")``, ``$(pwd)`` and ``$(cd DIR && pwd)`` substitutions
scripts use to find their own folder) and notes how a failed copy would be
hidden (no ``set -e``, ``|| true``, ``2>/dev/null``). Both branches of an
``if`` are followed, since which one runs depends on the image. ``set -e``
counts from a ``#!/bin/sh -e`` shebang or a ``set -e``/``set -o errexit``
line until a ``set +e``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Mapping, MutableMapping

from ..errors import ShippingError
from .dockerfile import names_folder

# $VAR, ${VAR}, and ${VAR:-word}-style forms (-, =, + and ?, with or without the colon),
# whose word may hold $OTHER and ${OTHER} itself (${WHEEL:-${DIR}/triton.whl}).
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?:(:?[-=+?])((?:[^${}]|\$\{[^{}]*\}|\$(?!\{))*))?\}|(\w+))")
_LOOPS = ("for", "while", "until")  # each closed by a "done"
_CONTROL = ("do", "then", "else", "fi", "elif", "if", "while", "{", "}")
# The script's own path, as "$0" or "${BASH_SOURCE[0]}", quoted or not.
_SELF = r'"?\$(?:0|\{0\}|BASH_SOURCE|\{BASH_SOURCE(?:\[0\])?\})"?'
_DIRNAME = re.compile(rf"\$\(\s*dirname\s+{_SELF}\s*\)|`\s*dirname\s+{_SELF}\s*`")
_PWD = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$(?:PWD\b|\{PWD\})")
# The folder neither starts nor ends with a space: each run of spaces is matched one
# way only (three overlapping runs made a line of 4,000 spaces take minutes).
_CD_PWD = re.compile(r"\$\(\s*cd\s+(\"?)([^\s\"()`;&|](?:[^\"()`;&|]*[^\s\"()`;&|])?)\1\s*(?:&&|;)\s*pwd\s*\)")
_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$")
_SEPARATORS = (";", "&&", "||", "|", "&")

# Bounds on what following a hostile script may cost (a vendor's is ~100 lines
# of 'cp'): a logical line, a variable's value ('A=$A$A' doubles it each line),
# the commands its loops replay (loops multiply), and how deep loops nest.
MAX_LINE = 64 << 10
MAX_VALUE = 64 << 10
MAX_COMMANDS = 100_000
MAX_LOOPS = 32


@dataclass(frozen=True)
class ScriptCopy:
    """One file or folder the script copies, in image paths."""

    source: str
    destination: str  # ends with "/" when it is certainly a folder
    recursive: bool
    line: int
    hides_failure: tuple[str, ...] = ()  # e.g. ("|| true", "2>/dev/null")
    stops_on_error: bool = False  # whether ``set -e`` is in force at this copy


@dataclass(frozen=True)
class InstallScript:
    """What a script copies and whether it stops on the first failure."""

    copies: tuple[ScriptCopy, ...]
    stops_on_error: bool  # set -e (or -o errexit) before the first copy
    unknown: tuple[str, ...] = field(default=())  # variables used but never assigned


def read_install_script(text: str, cwd: str, environment: Mapping[str, str] | None = None,
                        script: str | None = None, where: str | None = None) -> InstallScript:
    """Follow ``text`` as if run as the image path ``script`` in the image directory ``cwd``.

    ``environment`` holds the variables it inherits: the Dockerfile's ENV and ARG values.
    ``where`` (the script's context path) is where a ShippingError says a
    script past the bounds above went wrong.
    """
    where = where or script
    state = _State(cwd, environment or {}, script, where)
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    if first.startswith("#!") and re.search(r"\s-\w*e", first):
        state.errexit = state.errexit_first = True
    for line_number, line in logical_lines(text, where):
        state.run_line(line, line_number)
    return InstallScript(tuple(state.copies), state.errexit_first, tuple(sorted(state.unknown)))


def logical_lines(text: str, where: str | None = None) -> list[tuple[int, str]]:
    """Join continued lines; each (first line number, text). Raise ShippingError for one past ``MAX_LINE``."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not pending:
            start = number
        if len(pending) + len(raw) > MAX_LINE:
            raise ShippingError(f"line {start} is longer than {MAX_LINE} characters (continued lines joined)",
                                where=where, hint="a line this long is not the vendor's: check the input")
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        lines.append((start, pending + raw))
        pending = ""
    if pending:
        lines.append((start, pending))
    return lines


def expand_variables(word: str, variables: MutableMapping[str, str], unknown: set[str] | None = None) -> str:
    """Substitute ``$VAR``, ``${VAR}`` and ``${VAR:-word}``-style forms in ``word``, as the shell would.

    ``${VAR-word}`` gives ``word`` when VAR is unset, ``${VAR:-word}`` also
    when it is empty; ``=``/``:=`` do the same and assign VAR in ``variables``;
    ``${VAR+word}`` gives ``word`` when VAR is set, ``${VAR:+word}`` when it is
    set and not empty, else nothing. ``word`` is itself expanded. A variable
    with no value and no default stays as written, and its name goes into
    ``unknown``. A word that would expand past ``MAX_VALUE`` characters
    raises ShippingError.
    """
    produced = 0

    def lookup(match: re.Match[str]) -> str:
        nonlocal produced
        value = _lookup(match)
        produced += len(value)
        if produced > MAX_VALUE:  # before re.sub joins it: 'A=$A$A' lines double a value each
            raise ShippingError(f"a word expands past {MAX_VALUE} characters: {word[:60]!r}...",
                                hint="a value this long is not the vendor's: check the input")
        return value

    def _lookup(match: re.Match[str]) -> str:
        name, operator, alternative = match.group(1) or match.group(4), match.group(2), match.group(3)
        value = variables.get(name)
        # With a colon, an empty value counts as unset.
        is_set = value is not None and (bool(value) or not (operator or "").startswith(":"))
        if operator and operator[-1] in "-=" and not is_set:
            value = expand_variables(alternative, variables, unknown)
            if operator[-1] == "=":
                variables[name] = value
            return value
        if operator and operator[-1] == "+":
            return expand_variables(alternative, variables, unknown) if is_set else ""
        if value is not None:
            return value
        if unknown is not None:
            unknown.add(name)
        return match.group(0)

    return _VARIABLE.sub(lookup, word)


class _State:
    def __init__(self, cwd: str, environment: Mapping[str, str], script: str | None = None,
                 where: str | None = None):
        self.cwd = cwd
        self.script = script
        self.where = where
        self.commands = 0  # followed so far, loop replays included
        self.pushed: list[str] = []  # pushd's stack
        self.variables: dict[str, str] = dict(environment)
        self.copies: list[ScriptCopy] = []
        self.unknown: set[str] = set()
        self.errexit = False
        self.errexit_first = False
        # The open top-level `for` loop: (variable, values, collected commands). Loops
        # nested in it are collected with its body and followed when it is replayed,
        # once its variable has a value; `nesting` counts those still open.
        self.loop: tuple[str, list[str], list[tuple[int, _Command]]] | None = None
        self.nesting = 0

    def run_line(self, line: str, number: int) -> None:
        tokens = _tokens(self._substitute_commands(line))
        if tokens is None:
            return
        try:
            self._run_tokens(tokens, number)
        except ShippingError as error:
            if error.where is not None:
                raise
            raise ShippingError(f"line {number}: {error.message}", where=self.where, hint=error.hint) from None

    def _run_tokens(self, tokens: list[str], number: int) -> None:
        for command in _split(tokens):
            self._command(command, number)

    def _command(self, command: _Command, number: int) -> None:
        words = command.words
        if not words:
            return
        self.commands += 1
        if self.commands > MAX_COMMANDS:
            raise ShippingError(f"following its loops runs more than {MAX_COMMANDS} commands",
                                hint="loops this large are not the vendor's: check the input")
        head = words[0]
        if self.loop is not None:
            keyword = next((w for w in words if w not in ("do", "then", "else", "{")), "")
            if keyword == "done" and not self.nesting:
                self._replay(*self.loop)
            else:
                self.nesting += (keyword in _LOOPS) - (keyword == "done")
                if self.nesting > MAX_LOOPS:  # replaying them recurses once per level
                    raise ShippingError(f"loops nest more than {MAX_LOOPS} deep")
                self.loop[2].append((number, command))
            return
        if head == "for" and len(words) >= 3 and words[2] == "in":
            self.loop = (words[1], self._values(words[3:]), [])
            return
        if head in _CONTROL:
            # Control words: follow what they guard as if it ran.
            rest = words[1:]
            if head in ("if", "elif", "while"):
                return  # the test itself copies nothing
            if rest:
                self._command(_Command(rest, command.raw[1:], command.hides), number)
            return
        match = _ASSIGNMENT.match(head)
        if match and len(words) == 1:
            self.variables[match.group(1)] = self._expand(match.group(2))
            return
        expanded = [self._expand(w) for w in words]
        self._builtin(expanded, command, number)

    def _substitute_commands(self, line: str) -> str:
        """Replace the command substitutions that only name a folder with that folder."""
        if self.script is not None:
            line = _DIRNAME.sub(posixpath.dirname(self.script), line)
        line = _PWD.sub(self.cwd, line)
        return _CD_PWD.sub(lambda m: posixpath.normpath(posixpath.join(self.cwd, m.group(2))), line)

    def _replay(self, variable: str, values: list[str], body: list[tuple[int, _Command]]) -> None:
        """Follow a loop's body once per value, as the shell would run it."""
        self.loop = None
        for value in values or [""]:
            saved = self.variables.get(variable)
            self.variables[variable] = value
            for line_number, body_command in body:
                self._command(body_command, line_number)
            if saved is None:
                self.variables.pop(variable, None)
            else:
                self.variables[variable] = saved

    def _values(self, words: list[str]) -> list[str]:
        values = []
        for word in words:
            if word in (";", "do"):
                break
            values.extend(self._expand(word).split())
            if len(values) > MAX_COMMANDS:  # an empty body replays nothing, but each value costs a pass
                raise ShippingError(f"a loop runs over more than {MAX_COMMANDS} values")
        return values

    def _expand(self, word: str) -> str:
        return expand_variables(word, self.variables, self.unknown)

    def _builtin(self, words: list[str], command: "_Command", number: int) -> None:
        head = words[0]
        if head == "set":
            flags = " ".join(words[1:])
            if re.search(r"(^|\s)-\w*e|-o errexit", flags):
                self.errexit = True
                if not self.copies:
                    self.errexit_first = True
            elif re.search(r"(^|\s)\+\w*e|\+o errexit", flags):
                self.errexit = False
        elif head in ("cd", "pushd") and len(words) > 1:
            if head == "pushd":
                self.pushed.append(self.cwd)
            self.cwd = posixpath.normpath(posixpath.join(self.cwd, words[1]))
        elif head == "popd" and self.pushed:
            self.cwd = self.pushed.pop()
        elif posixpath.basename(head) in ("cp", "install"):  # /bin/cp too
            self._copy(words, command, number)

    def _copy(self, words: list[str], command: "_Command", number: int) -> None:
        options = [w for w in words[1:] if w.startswith("-")]
        operands = [w for w in words[1:] if not w.startswith("-")]
        if posixpath.basename(words[0]) == "install":
            # install -m MODE SRC DST: drop the option's argument.
            operands = _drop_option_arguments(words[1:], {"-m", "-o", "-g", "--mode", "--owner", "--group"})
        if len(operands) < 2:
            return
        recursive = any(o in ("-r", "-R", "-a", "--recursive", "--archive") or
                        (not o.startswith("--") and any(c in o for c in "rRa")) for o in options)
        *sources, destination = operands
        folder = destination.endswith("/") or len(sources) > 1 or names_folder(destination)
        destination = posixpath.normpath(posixpath.join(self.cwd, destination)) + ("/" if folder else "")
        for source in sources:
            self.copies.append(ScriptCopy(
                source=posixpath.normpath(posixpath.join(self.cwd, source)),
                destination=destination,
                recursive=recursive,
                line=number,
                hides_failure=command.hides,
                stops_on_error=self.errexit,
            ))


def _drop_option_arguments(words: list[str], with_argument: set[str]) -> list[str]:
    operands, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in with_argument:
            skip = True
        elif not word.startswith("-"):
            operands.append(word)
    return operands


@dataclass
class _Command:
    words: list[str]
    raw: list[str]
    hides: tuple[str, ...]


def _tokens(line: str) -> list[str] | None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


def _split(tokens: list[str]) -> list[_Command]:
    """Split a line into simple commands, noting what would hide each one's failure.

    ``|| cmd`` (other than ``exit``/``return``/``false``) hides a failure of
    every command of its and-or list; a command followed by ``&&`` or piped
    into another does not stop a ``set -e`` script when it fails; ``2>/dev/null``
    (or ``>/dev/null 2>&1``) hides its message.
    """
    commands: list[_Command] = []
    current: list[str] = []
    hides: list[str] = []
    list_start = 0  # index in commands of the first command of the current and-or list
    stdout_null = False
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _SEPARATORS:
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if token == "||" and following in ("true", ":"):
                hides.append("|| true")
                for earlier in commands[list_start:]:
                    earlier.hides = _add(earlier.hides, "|| true")
                index += 2
                continue
            if token == "||" and following and following not in ("exit", "return", "false"):
                for earlier in commands[list_start:]:
                    earlier.hides = _add(earlier.hides, f"|| {following}")
                hides.append(f"|| {following}")
            elif token == "&&":
                hides.append("&& ...")
            elif token == "|":
                hides.append("| ...")
            commands.append(_Command(_words(current), current, tuple(hides)))
            if token in (";", "&"):
                list_start = len(commands)
            current, hides, stdout_null = [], [], False
        elif token in (">", ">>", "<", ">&", "&>"):
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            if current and current[-1].isdigit():
                descriptor = current.pop()
            else:
                descriptor = ""
            if target == "/dev/null" and descriptor in ("2", "&") or token == "&>" and target == "/dev/null":
                hides.append(f"{descriptor or '&'}>/dev/null" if token != "&>" else "&>/dev/null")
            elif target == "/dev/null" and descriptor in ("", "1") and token in (">", ">>"):
                stdout_null = True
            elif token == ">&" and descriptor == "2" and target == "1" and stdout_null:
                hides.append(">/dev/null 2>&1")
            index += 2
            continue
        else:
            current.append(token)
        index += 1
    commands.append(_Command(_words(current), current, tuple(hides)))
    return commands


def _add(hides: tuple[str, ...], hide: str) -> tuple[str, ...]:
    return hides if hide in hides else (*hides, hide)


def _words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t]
