"""Read what a Dockerfile copies from the build context and which scripts it runs."""

from __future__ import annotations

import io
import json
import posixpath
import shlex
from dataclasses import dataclass

from dockerfile_parse import DockerfileParser

from ..errors import ShippingError


@dataclass(frozen=True)
class ContextCopy:
    """A ``COPY``/``ADD`` of context paths to an image path."""

    sources: tuple[str, ...]  # context-relative, normalised ("." for the root)
    destination: str  # absolute image path; ends with "/" when it names a folder
    line: int  # 1-based line in the Dockerfile


@dataclass(frozen=True)
class ScriptRun:
    """A ``RUN`` that executes a script shipped in the image."""

    script: str  # absolute image path of the script
    cwd: str  # the directory it runs in
    line: int


@dataclass(frozen=True)
class Dockerfile:
    """The parts of a Dockerfile that decide what reaches the image."""

    copies: tuple[ContextCopy, ...]
    runs: tuple[ScriptRun, ...]


def parse_dockerfile(text: str, where: str = "Dockerfile") -> Dockerfile:
    """Parse the Dockerfile's COPY/ADD, WORKDIR and script-running RUN lines."""
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
    workdir = "/"
    copies: list[ContextCopy] = []
    runs: list[ScriptRun] = []
    for instruction in parser.structure:
        kind, value, line = instruction["instruction"], instruction["value"], instruction["startline"] + 1
        if kind == "FROM":
            workdir = "/"  # each stage starts afresh; only the last stage ships, but all are read
        elif kind == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, value.strip()))
        elif kind in ("COPY", "ADD"):
            copy = _copy(value, workdir, line, f"{where}:{line}")
            if copy is not None:
                copies.append(copy)
        elif kind == "RUN":
            runs.extend(_script_runs(value, workdir, line))
    return Dockerfile(tuple(copies), tuple(runs))


def _copy(value: str, workdir: str, line: int, where: str) -> ContextCopy | None:
    words = _words(value, where)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    if any(f.startswith("--from") for f in flags):
        return None  # copies from another stage or image, not from the context
    if len(paths) < 2:
        raise ShippingError(f"COPY/ADD needs a source and a destination: {value!r}", where=where)
    *sources, destination = paths
    folder = destination.endswith("/") or len(sources) > 1
    absolute = posixpath.normpath(posixpath.join(workdir, destination))
    return ContextCopy(
        sources=tuple(posixpath.normpath(s.lstrip("/")) for s in sources),
        destination=absolute.rstrip("/") + ("/" if folder else ""),
        line=line,
    )


def _words(value: str, where: str) -> list[str]:
    stripped = value.strip()
    if stripped.startswith("["):
        # The JSON (exec) form; flags still come first, outside the array.
        try:
            words = json.loads(stripped)
        except json.JSONDecodeError:
            raise ShippingError(f"COPY/ADD has a malformed JSON array: {value!r}", where=where) from None
        return [str(w) for w in words]
    flags = []
    while stripped.startswith("--"):
        flag, _, stripped = stripped.partition(" ")
        flags.append(flag)
        stripped = stripped.lstrip()
    if stripped.startswith("["):
        return flags + _words(stripped, where)
    return flags + shlex.split(stripped)


def _script_runs(command: str, workdir: str, line: int) -> list[ScriptRun]:
    """Find ``./script``, ``sh script`` and ``bash script`` in a RUN, following ``cd``."""
    runs = []
    cwd = workdir
    for words in _simple_commands(command):
        if not words:
            continue
        head = words[0]
        if head == "cd" and len(words) > 1:
            cwd = posixpath.normpath(posixpath.join(cwd, words[1]))
        elif head in ("sh", "bash") and len(words) > 1 and not words[1].startswith("-"):
            runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, words[1])), cwd, line))
        elif "/" in head and not head.startswith("/usr/bin") and not head.startswith("/bin"):
            runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, head)), cwd, line))
        elif head.endswith(".sh"):
            runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, head)), cwd, line))
    return runs


def _simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in (";", "&&", "||", "|", "&"):
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:
        return []  # unbalanced quotes: not a command we can follow
    return commands
