"""Read what a shell script or a Dockerfile's ``RUN`` lines ``pip install``, far enough to spot a package.

Not a shell: it follows what install scripts do to name packages
(``VAR=value`` and ``export`` with ``$VAR``, ``${VAR}`` and
``${VAR:-default}``-style forms, line continuations, ``;``/``&&``/``||``
lists, ``pip``, ``pip3``, ``python3 -m pip`` and their paths,
``sudo``/``env`` prefixes) and where it runs (``cd``, ``pushd``/``popd``,
``cd "$(dirname "$0")"``), so a ``-r requirements.txt`` names a file of
the image. Where files go is ``patcher/shipping/install_script.py``'s
business; both expand variables with its ``expand_variables``. A
Dockerfile's ``RUN`` lines come from ``dockerfile_lines``; what an operand
names, and what a requirements file holds, from ``requirement_files``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

# The install-script reader's own joiner and expansion: a script is read the same way for both.
from ..shipping.install_script import expand_variables, logical_lines
from .requirement_files import EDITABLE_OPTIONS, FILE_OPTIONS, project_name

__all__ = ["Command", "PipInstall", "logical_lines", "pip_commands", "pip_installs", "shell_commands"]

_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=(.*)$")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&"})
_PIP = re.compile(r"^(?:.*/)?pip(?:3(?:\.\d+)?)?$")
# Words that run the command after them: prefixes, and the shell's reserved words, since a
# one-line `if ...; then pip install x; fi` or `for ...; do pip install x; done` splits at `;`
# into commands that start with `then` or `do`.
_PREFIXES = frozenset({"sudo", "env", "command", "exec", "time", "then", "do", "else", "if", "elif", "while",
                       "until", "!", "{"})
_SHELL = re.compile(r"^(?:.*/)?(?:sh|bash|dash|zsh)$")
_SHELL_COMMAND = re.compile(r"^-[a-z]*c$")  # -c, -ec, -lc: the next word is a command string
_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
# The script's own folder: $(dirname "$0"), $(dirname ${BASH_SOURCE[0]}), `dirname $0`.
_OWN_FOLDER = re.compile(r"^(?:\$\(|`)\s*dirname\s+\$(?:0|\{0\}|BASH_SOURCE|\{BASH_SOURCE(?:\[0\])?\})\s*(?:\)|`)$")
_PWD = re.compile(r"^(?:\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$PWD|\$\{PWD\})$")
# pip's options that take a value, besides those that name a file (FILE_OPTIONS, EDITABLE_OPTIONS).
_WITH_VALUE = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target",
                         "--prefix", "--root", "--src", "--upgrade-strategy", "--trusted-host", "--no-binary",
                         "--only-binary", "--platform", "--python-version", "--implementation", "--abi",
                         "--progress-bar", "--log", "--cache-dir", "--report", "--config-settings", "-C",
                         "--global-option", "--install-option"})


@dataclass(frozen=True)
class Command:
    """One simple command of a script, its words expanded, and the folder it runs in ("" when unknown)."""

    line: int
    words: tuple[str, ...]
    cwd: str


@dataclass(frozen=True)
class PipInstall:
    """One ``pip install``: its operands, the requirement and constraint files it reads, and where it runs."""

    line: int
    operands: tuple[str, ...]  # requirements, wheels, URLs, as expanded
    files: tuple[tuple[str, str], ...]  # ("-r" or "-c", the file as written, expanded)
    cwd: str  # the image folder the command runs in, "" when unknown
    editables: tuple[str, ...] = ()  # the -e operands
    no_deps: bool = False  # --no-deps: installs the operands alone, none of their dependencies


def shell_commands(lines: Sequence[tuple[int, str]], environment: Mapping[str, str] | None = None,
                   cwd: str = "", script: str = "") -> list[Command]:
    """Return each simple command of ``lines`` with its words expanded and the folder it runs in.

    ``environment`` holds the variables the script inherits, ``cwd`` the
    image folder it starts in and ``script`` its own image path (for
    ``$(dirname "$0")``). A variable counts from an assignment alone on its
    command (``VAR=x``, ``export VAR=x``); ``cd``, ``pushd`` and ``popd``
    move the folder, and a folder that cannot be read makes it unknown.
    """
    variables = dict(environment or {})
    folder, stack = cwd, []
    commands: list[Command] = []
    for number, line in lines:
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        for token in [*tokens, ";"]:
            if token not in _SEPARATORS:
                command.append(token)
                continue
            if len(command) == 1 and _ASSIGNMENT.match(command[0]):
                match = _ASSIGNMENT.match(command[0])
                assert match is not None
                variables[match.group(1)] = expand_variables(match.group(2), variables)
            elif command and command[0] == "export" and len(command) == 2 and _ASSIGNMENT.match(command[1]):
                match = _ASSIGNMENT.match(command[1])
                assert match is not None
                variables[match.group(1)] = expand_variables(match.group(2), variables)
            elif command and command[0] in ("cd", "pushd"):
                if command[0] == "pushd":
                    stack.append(folder)
                # An unquoted $(dirname $0) is two words: read them together.
                folder = _moved(folder, " ".join(w for w in command[1:] if w not in ("-P", "-L")), variables, script)
            elif command == ["popd"]:
                folder = stack.pop() if stack else ""
            if command:
                words = tuple(w for word in command for w in expand_variables(word, variables).split())
                commands.append(Command(number, words, folder))
            command = []
    return commands


def _moved(folder: str, target: str, variables: Mapping[str, str], script: str) -> str:
    """Return the folder ``cd target`` leads to from ``folder``, or "" when it cannot be read."""
    if _OWN_FOLDER.match(target):
        return posixpath.dirname(script) if script else ""
    if _PWD.match(target):
        return folder
    expanded = expand_variables(target, dict(variables))
    if not expanded or expanded == "-" or expanded.startswith("~") or any(c in expanded for c in "$`*?["):
        return ""  # home, the previous folder, or something the reader cannot know
    if expanded.startswith("/"):
        return posixpath.normpath(expanded)
    return posixpath.normpath(posixpath.join(folder, expanded)) if folder else ""


def pip_commands(commands: Sequence[Command]) -> list[PipInstall]:
    """Return each ``pip install`` among ``commands``, read into operands, files and editables."""
    found = []
    for command in commands:
        rest = _pip_arguments(list(command.words))
        if rest is None or "install" not in rest:
            continue
        operands: list[str] = []
        files: list[tuple[str, str]] = []
        editables: list[str] = []
        words = rest[rest.index("install") + 1:]
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            option, _, attached = word.partition("=")
            if word in FILE_OPTIONS or option in FILE_OPTIONS:
                value = attached if option in FILE_OPTIONS and "=" in word else (words[index] if index < len(words) else "")
                if not (option in FILE_OPTIONS and "=" in word):
                    index += 1
                if value:
                    files.append((FILE_OPTIONS[option], value))
            elif word[:2] in ("-r", "-c") and len(word) > 2 and not word.startswith("--"):
                files.append((word[:2], word[2:]))  # -rrequirements.txt
            elif word in EDITABLE_OPTIONS:
                if index < len(words):
                    editables.append(words[index])
                index += 1
            elif word in _WITH_VALUE:
                index += 1
            elif not word.startswith("-"):
                operands.append(word)
        found.append(PipInstall(command.line, tuple(operands), tuple(files), command.cwd, tuple(editables),
                                "--no-deps" in words))
    return found


def _pip_arguments(words: list[str]) -> list[str] | None:
    """Return the words after ``pip`` (or ``python3 -m pip``) when the command runs pip, else None."""
    while words:
        if words[0] in _PREFIXES or _ASSIGNMENT.match(words[0]):
            words = words[1:]
        elif words[0] == "uv" and words[1:2] == ["pip"]:  # uv's pip interface takes pip's arguments
            words = words[1:]
        elif _SHELL.match(words[0]) and len(words) > 1 and _SHELL_COMMAND.match(words[1]):
            words = words[2:]  # sh -c 'pip install x': its string, already split into words
        else:
            break
    if not words:
        return None
    if _PIP.match(words[0]):
        return words[1:]
    if _PYTHON.match(words[0]) and words[1:3] == ["-m", "pip"]:
        return words[3:]
    return None


def pip_installs(lines: Sequence[tuple[int, str]], wanted: Callable[[str], bool],
                 environment: Mapping[str, str] | None = None) -> list[tuple[int, str]]:
    """Return (line, operand) for each ``pip install`` operand (requirement, wheel, URL) that ``wanted`` accepts."""
    return [(pip.line, operand) for pip in pip_commands(shell_commands(lines, environment))
            for operand in pip.operands if wanted(project_name(operand))]
