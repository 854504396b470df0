"""What a pip operand names, and what a requirements (or constraints) file installs or reads.

``requirement_lines`` reads the file as pip does: continuations, comments,
``${VAR}`` from the environment, options on their own line (``-r``/``-c``
nested, ``-e``), a requirement per line. ``project_name``, ``egg_name`` and
``vcs_name`` give the normalised project an operand installs, however it is
spelled (a requirement, a wheel or sdist path, a URL, a VCS URL).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Iterator, Mapping

__all__ = ["EDITABLE_OPTIONS", "FILE_OPTIONS", "RequirementLine", "egg_name", "project_name", "requirement_lines",
           "vcs_name"]

# A requirement: name, extras, then a version specifier or marker (triton==2.1.0, triton[tests]>=2).
# Each part can follow only one way, so a long run of spaces is read once (no backtracking between two \s*).
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\]\s*)?(?:[<>=!~;@].*)?$", re.DOTALL)
# pip's options that name a file to read (-r, -c), in a requirements file or on pip's command line; and -e.
FILE_OPTIONS = {"-r": "-r", "--requirement": "-r", "-c": "-c", "--constraint": "-c"}
EDITABLE_OPTIONS = frozenset({"-e", "--editable"})
# pip expands ${NAME} (upper case, digits, underscores) in requirements files, nothing else.
_PIP_VARIABLE = re.compile(r"\$\{([A-Z0-9_]+)\}")
# A comment starts a line or follows whitespace (pip's rule), found by its "#" alone: linear in the line.
_COMMENT = re.compile(r"(?:^|(?<=\s))#")


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
        if option in FILE_OPTIONS or option in EDITABLE_OPTIONS:
            value = attached if "=" in words[0] else (words[1] if len(words) > 1 else "")
            if value:
                yield RequirementLine(number, "-e" if option in EDITABLE_OPTIONS else FILE_OPTIONS[option], value)
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
