"""Read what a shell script or a Dockerfile's ``RUN`` lines ``pip install``, far enough to spot a package.

Not a shell: it follows what install scripts do to name packages
(``VAR=value`` and ``export`` with ``$VAR``, ``${VAR}`` and
``${VAR:-default}``-style forms, line continuations, ``;``/``&&``/``||``
lists, ``pip``, ``pip3``, ``python3 -m pip`` and their paths,
``sudo``/``env`` prefixes). Where files go is
``patcher/shipping/install_script.py``'s business; both expand variables
with its ``expand_variables``.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Callable, Mapping, Sequence

# The install-script reader's own joiner and expansion: a script is read the same way for both.
from ..depth import data_nesting_problem
from ..shipping.install_script import expand_variables, logical_lines

__all__ = ["dockerfile_runs", "logical_lines", "pip_installs", "project_name"]

_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=(.*)$")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&"})
_PIP = re.compile(r"^(?:.*/)?pip(?:3(?:\.\d+)?)?$")
_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
# A requirement: name, extras, then a version specifier or marker (triton==2.1.0, triton[tests]>=2).
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@].*)?$")


def pip_installs(lines: Sequence[tuple[int, str]], wanted: Callable[[str], bool],
                 environment: Mapping[str, str] | None = None) -> list[tuple[int, str]]:
    """Return (line, operand) for each ``pip install`` operand (requirement, wheel, URL) that ``wanted`` accepts."""
    variables = dict(environment or {})
    found: list[tuple[int, str]] = []
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
            else:
                words = [w for word in command for w in expand_variables(word, variables).split()]
                found.extend((number, what) for what in _installed(words, wanted))
            command = []
    return found


def dockerfile_runs(text: str) -> list[tuple[int, str]]:
    """Return the shell commands of the Dockerfile's ``RUN`` lines (shell or exec form), with their line numbers."""
    runs = []
    for number, line in logical_lines(text):
        words = line.split(None, 1)
        if len(words) != 2 or words[0].upper() != "RUN":
            continue
        command = words[1].strip()
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


def _installed(words: list[str], wanted: Callable[[str], bool]) -> list[str]:
    """Return the requirements or wheels ``wanted`` accepts that a command installs, if it is a pip install."""
    while words and (words[0] in ("sudo", "env", "command", "exec") or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if not words:
        return []
    if _PIP.match(words[0]):
        rest = words[1:]
    elif _PYTHON.match(words[0]) and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    else:
        return []
    if "install" not in rest:
        return []
    operands = rest[rest.index("install") + 1:]
    found: list[str] = []
    skip = False
    for word in operands:
        if skip:
            skip = False
            continue
        if word in ("-r", "-c", "--requirement", "--constraint", "-i", "--index-url", "--extra-index-url",
                    "-f", "--find-links", "-t", "--target", "--prefix", "--root"):
            skip = True
            continue
        if word.startswith("-"):
            continue
        if wanted(project_name(word)):
            found.append(word)
    return found


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
