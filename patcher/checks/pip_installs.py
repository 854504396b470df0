"""Read what a shell script or a Dockerfile's ``RUN`` lines ``pip install``, far enough to spot a package.

Not a shell: it follows what install scripts do to name packages
(``VAR=value`` and ``export`` with ``$VAR``, ``${VAR}`` and
``${VAR:-default}``-style forms, line continuations, ``;``/``&&``/``||``
lists, ``pip``, ``pip3``, ``python3 -m pip`` and their paths,
``sudo``/``env`` prefixes) and where it runs (``cd``, ``pushd``/``popd``,
``cd "$(dirname "$0")"``), so a ``-r requirements.txt`` names a file of
the image. Where files go is ``patcher/shipping/install_script.py``'s
business; both expand variables with its ``expand_variables``.

``requirement_lines`` reads a requirements (or constraints) file as pip
does: continuations, comments, ``${VAR}`` from the environment, options on
their own line (``-r``/``-c`` nested, ``-e``), a requirement per line.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

# The install-script reader's own joiner and expansion: a script is read the same way for both.
from ..depth import data_nesting_problem
from ..shipping.install_script import expand_variables, logical_lines

__all__ = ["Command", "PipInstall", "RequirementLine", "dockerfile_environment", "dockerfile_runs",
           "dockerfile_run_starts", "egg_name", "logical_lines", "pip_commands", "pip_installs", "project_name",
           "requirement_lines", "shell_commands", "vcs_name"]

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
# A requirement: name, extras, then a version specifier or marker (triton==2.1.0, triton[tests]>=2).
# Each part can follow only one way, so a long run of spaces is read once (no backtracking between two \s*).
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\]\s*)?(?:[<>=!~;@].*)?$", re.DOTALL)
# The script's own folder: $(dirname "$0"), $(dirname ${BASH_SOURCE[0]}), `dirname $0`.
_OWN_FOLDER = re.compile(r"^(?:\$\(|`)\s*dirname\s+\$(?:0|\{0\}|BASH_SOURCE|\{BASH_SOURCE(?:\[0\])?\})\s*(?:\)|`)$")
_PWD = re.compile(r"^(?:\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$PWD|\$\{PWD\})$")
# pip's options that take a value; -r and -c name files to read.
_WITH_VALUE = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target",
                         "--prefix", "--root", "--src", "--upgrade-strategy", "--trusted-host", "--no-binary",
                         "--only-binary", "--platform", "--python-version", "--implementation", "--abi",
                         "--progress-bar", "--log", "--cache-dir", "--report", "--config-settings", "-C",
                         "--global-option", "--install-option"})
_FILES = {"-r": "-r", "--requirement": "-r", "-c": "-c", "--constraint": "-c"}
_EDITABLE = frozenset({"-e", "--editable"})
# pip expands ${NAME} (upper case, digits, underscores) in requirements files, nothing else.
_PIP_VARIABLE = re.compile(r"\$\{([A-Z0-9_]+)\}")
# A comment starts a line or follows whitespace (pip's rule), found by its "#" alone: linear in the line.
_COMMENT = re.compile(r"(?:^|(?<=\s))#")


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
            if word in _FILES or option in _FILES:
                value = attached if option in _FILES and "=" in word else (words[index] if index < len(words) else "")
                if not (option in _FILES and "=" in word):
                    index += 1
                if value:
                    files.append((_FILES[option], value))
            elif word[:2] in ("-r", "-c") and len(word) > 2 and not word.startswith("--"):
                files.append((word[:2], word[2:]))  # -rrequirements.txt
            elif word in _EDITABLE:
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


def dockerfile_runs(text: str) -> list[tuple[int, str]]:
    """Return the shell commands of the Dockerfile's ``RUN`` lines (shell or exec form), with their line numbers."""
    runs = []
    for number, line in logical_lines(text):
        words = line.split(None, 1)
        if len(words) != 2 or words[0].upper() != "RUN":
            continue
        command = words[1].strip()
        while command.startswith("--"):  # RUN --mount=... --network=none pip install ...
            parts = command.split(None, 1)
            command = parts[1] if len(parts) == 2 else ""
        if command.startswith("["):  # exec form: RUN ["pip", "install", "triton"]
            if data_nesting_problem(command) is not None:
                continue  # not a list of words; json would recurse once per level
            try:
                argv = json.loads(command)
            except ValueError:
                continue
            if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
                command = " ".join(shlex.quote(a) for a in argv)
        runs.append((number, command))
    return runs


def dockerfile_run_starts(text: str) -> dict[int, tuple[str, dict[str, str]]]:
    """Return, for each ``RUN`` line, the folder it runs in (its stage's last ``WORKDIR``, "/" at first; "" when
    unknown) and the variables its shell starts with (the stage's ``ENV`` values and ``ARG`` defaults so far)."""
    folder = "/"
    variables: dict[str, str] = {}
    found: dict[int, tuple[str, dict[str, str]]] = {}
    for number, line in logical_lines(text):
        words = line.split(None, 1)
        keyword = words[0].upper() if words else ""
        if keyword == "FROM":
            folder, variables = "/", {}
        elif keyword == "WORKDIR" and len(words) == 2:
            target = expand_variables(words[1].strip().strip("\"'"), dict(variables))
            if "$" in target:
                folder = ""  # a variable the reader does not know
            elif target.startswith("/") or folder:
                folder = posixpath.normpath(posixpath.join(folder, target))
        elif keyword in ("ENV", "ARG") and len(words) == 2:
            for name, value in _settings(words[1], keyword):
                variables[name] = expand_variables(value, dict(variables))
        elif keyword == "RUN":
            found[number] = (folder, dict(variables))
    return found


def _settings(rest: str, keyword: str) -> list[tuple[str, str]]:
    """Return the (name, value) pairs of an ``ENV`` or ``ARG`` line (``ARG NAME`` alone sets nothing known)."""
    try:
        parts = shlex.split(rest, posix=True)
    except ValueError:
        parts = rest.split()
    if not parts:
        return []
    if "=" in parts[0]:
        return [tuple(part.split("=", 1)) for part in parts if "=" in part]  # type: ignore[misc]
    if keyword == "ENV" and len(parts) > 1:  # the legacy form: ENV NAME value with spaces
        return [(parts[0], " ".join(parts[1:]))]
    return []


def dockerfile_environment(text: str) -> list[tuple[int, str, str]]:
    """Return (line, name, the instruction as written) for each variable the Dockerfile's ``ENV`` lines set."""
    found: list[tuple[int, str, str]] = []
    for number, line in logical_lines(text):
        words = line.split(None, 1)
        if len(words) != 2 or words[0].upper() != "ENV":
            continue
        try:
            parts = shlex.split(words[1], posix=True)
        except ValueError:
            parts = words[1].split()
        if not parts:
            continue
        names = [p.split("=", 1)[0] for p in parts if "=" in p] if "=" in parts[0] else [parts[0]]
        found.extend((number, name, " ".join(line.split())) for name in names)
    return found


@dataclass(frozen=True)
class RequirementLine:
    """One line of a requirements file that installs or reads something: a requirement, -e, or a nested file."""

    line: int
    kind: str  # "requirement", "-e", "-r" or "-c"
    value: str  # as pip reads it, ${VAR} expanded


def requirement_lines(text: str, environment: Mapping[str, str]) -> Iterator[RequirementLine]:
    """Yield what each line of a requirements or constraints file installs or reads, as pip reads the file."""
    pending, start = "", 0
    lines = text.replace("\r\n", "\n").split("\n")
    joined: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, 1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1]
            continue
        joined.append((start, pending + raw))
        pending = ""
    if pending:
        joined.append((start, pending))
    for number, line in joined:
        comment = _COMMENT.search(line)
        line = (line[:comment.start()] if comment else line).strip()
        if not line:
            continue
        line = _PIP_VARIABLE.sub(lambda m: environment.get(m.group(1), m.group(0)), line)
        if not line.startswith("-"):
            yield RequirementLine(number, "requirement", line)
            continue
        try:
            words = shlex.split(line, posix=True)
        except ValueError:
            words = line.split()
        option, _, attached = words[0].partition("=")
        if option in _FILES or option in _EDITABLE:
            value = attached if "=" in words[0] else (words[1] if len(words) > 1 else "")
            if value:
                yield RequirementLine(number, "-e" if option in _EDITABLE else _FILES[option], value)
        elif option[:2] in ("-r", "-c", "-e") and len(option) > 2 and not option.startswith("--"):
            yield RequirementLine(number, option[:2], option[2:])


def project_name(word: str) -> str:
    """Return the normalised project a pip operand names: a requirement, a wheel or sdist path, or a URL to one."""
    name = posixpath.basename(word.split("#", 1)[0].split("?", 1)[0])
    if name.endswith((".whl", ".tar.gz", ".zip")):
        project = name.split("-", 1)[0]
    else:
        match = _REQUIREMENT.match(word)
        if match is None:
            return ""
        project = match.group(1)
    return re.sub(r"[-_.]+", "-", project.lower())


def egg_name(word: str) -> str:
    """Return the project a URL's ``#egg=NAME`` fragment names (how ``-e`` and VCS URLs name theirs), or ""."""
    match = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", word)
    return re.sub(r"[-_.]+", "-", match.group(1).lower()) if match else ""


def vcs_name(word: str) -> str:
    """Return the repository a VCS URL installs (``git+https://github.com/triton-lang/triton.git@v2.1.0``), or ""."""
    if not re.match(r"^(?:git|hg|svn|bzr)\+", word):
        return ""
    path = word.split("#", 1)[0].rstrip("/")
    name = posixpath.basename(path).split("@", 1)[0]
    name = name[:-4] if name.endswith(".git") else name
    return re.sub(r"[-_.]+", "-", name.lower())
