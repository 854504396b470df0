"""A Dockerfile's ``RUN`` lines as shell commands, where each runs and with which variables, and its ``ENV`` names.

Read far enough for the install checks to find ``pip install`` lines; the
build itself is read by ``patcher/shipping/dockerfile.py``.
"""

from __future__ import annotations

import json
import posixpath
import shlex

from ..depth import data_nesting_problem
from ..shipping.install_script import expand_variables, logical_lines

__all__ = ["dockerfile_environment", "dockerfile_run_starts", "dockerfile_runs"]


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
