"""Read an install script the way sh runs it, to know which file it copies where.

The reading itself lives in the ``shell_*`` modules: ``shell_lexer`` and
``shell_syntax`` parse POSIX sh (and the bash forms scripts use) into
``shell_nodes``' tree, ``shell_words`` expands words (``shell_arithmetic``
their arithmetic), ``shell_interpreter`` keeps the shell's state and control
flow, ``shell_commands`` dispatches a command to the builtins
(``shell_builtins``, ``output_builtins``), the programs it follows
(``shell_programs``: scripts, ``sh -c``, Python, pip) or others, and
``file_commands`` does what ``cp``, ``install``, ``mv``, ``ln``, ``rsync``
and ``rm`` do to the image. This module is their front for one script read
on its own (``read_install_script``), and keeps the helpers the safety
rules share (``logical_lines``, ``expand_variables``): a script is read the
same way for both.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Mapping, MutableMapping

from .image_fs import ImageFS, Placement, normalise
from .shell_programs import SHELLS, run_script
from .shell_interpreter import Shell, shebang
from .shell_records import Build, CommandContext, Note, ScriptCopy

__all__ = ["InstallScript", "Note", "ScriptCopy", "expand_variables", "logical_lines", "read_install_script"]

# $VAR, ${VAR}, and ${VAR:-word}-style forms (-, =, + and ?, with or without the colon),
# whose word may hold $OTHER and ${OTHER} itself (${WHEEL:-${DIR}/triton.whl}).
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?:(:?[-=+?])((?:[^${}]|\$\{[^{}]*\}|\$(?!\{))*))?\}|(\w+))")


_SCRIPT = "script"  # the context path the lone script is read under
# The longest value ``expand_variables`` builds: 'A=$A$A' lines double a value
# each, and a vendor's values are paths and versions.
MAX_VALUE = 64 << 10


@dataclass(frozen=True)
class InstallScript:
    """What a script copies and whether it stops on the first failure."""

    copies: tuple[ScriptCopy, ...]
    stops_on_error: bool  # set -e (or -o errexit) before the first copy
    unknown: tuple[str, ...] = field(default=())  # variables used but never assigned


def read_install_script(text: str, cwd: str, environment: Mapping[str, str] | None = None,
                        script: str | None = None) -> InstallScript:
    """Follow ``text`` as if run as the image path ``script`` in the image directory ``cwd``.

    ``environment`` holds the variables it inherits: the Dockerfile's ENV and ARG values.
    Nothing of the image is known but the script itself, so every copy is
    reported as the script writes it.
    """
    image = normalise(script or "/install.sh")
    fs = ImageFS()
    fs.place(image, Placement(_SCRIPT, (), 0))
    build = Build(fs, lambda path: text if path == _SCRIPT else None)
    caller = Shell(build, _SCRIPT, cwd, dict(environment or {}))
    interpreter = shebang(text)
    program = posixpath.basename(interpreter[0]) if interpreter is not None else "sh"
    run_script(caller, image, text, image, [], CommandContext(0, "", tail=True), {},
               interpreter[1] if interpreter is not None else [], program=program if program in SHELLS else "sh")
    # The script may run itself again ('exec bash "$0" "$@"'): each run is a record, and all are this script's.
    # Their copies are taken in the order the runs start (as plan_shipping joins a script run twice from one RUN),
    # and set -e as it stands at the first copy of the first run that copies anything.
    records = build.scripts
    first = next((r for r in records if r.copies), records[0])
    return InstallScript(tuple(c for r in records for c in r.copies), first.errexit_first,
                         tuple(sorted({name for r in records for name in r.unknown})))


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continued lines (a trailing backslash): each logical line with the number of its first line."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not pending:
            start = number
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
    ``unknown``; so does one whose value would take the word past
    ``MAX_VALUE`` characters.
    """
    produced = 0

    def lookup(match: re.Match[str]) -> str:
        nonlocal produced
        value = _lookup(match)
        produced += len(value)
        if produced > MAX_VALUE:  # before re.sub joins it
            if unknown is not None:
                unknown.add(match.group(1) or match.group(4))
            return match.group(0)
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
