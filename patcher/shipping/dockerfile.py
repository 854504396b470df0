"""Read what a Dockerfile copies from the build context and which scripts it runs.

dockerfile-parse does the parsing (line continuations, comments, the
instruction structure, ``ENV``/``ARG`` values per stage); this module only
interprets ``COPY``/``ADD`` (shell and JSON forms, flags such as
``--chown``), ``WORKDIR`` and the ``RUN`` lines that execute a script.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Mapping

from dockerfile_parse import DockerfileParser
from dockerfile_parse.util import WordSplitter

from ..depth import data_nesting_problem
from ..errors import ShippingError

_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


@dataclass(frozen=True)
class ContextCopy:
    """A ``COPY``/``ADD`` of context paths to an image path."""

    sources: tuple[str, ...]  # context-relative, normalised ("." for the root); may hold globs
    destination: str  # absolute image path; ends with "/" when it names a folder
    line: int  # 1-based line in the Dockerfile
    instruction: str = "COPY"  # or "ADD"
    flags: tuple[str, ...] = ()  # e.g. ("--chown=1000:1000",), as written


@dataclass(frozen=True)
class ScriptRun:
    """A ``RUN`` that executes a script shipped in the image."""

    script: str  # absolute image path of the script
    cwd: str  # the directory it runs in
    line: int
    environment: Mapping[str, str] = field(default_factory=dict)  # the ENV and ARG values it sees


@dataclass(frozen=True)
class Workdir:
    """A ``WORKDIR``, resolved to the absolute image path later relative paths start from."""

    path: str
    line: int


@dataclass(frozen=True)
class Dockerfile:
    """The parts of a Dockerfile that decide what reaches the image."""

    copies: tuple[ContextCopy, ...]
    runs: tuple[ScriptRun, ...]
    workdirs: tuple[Workdir, ...] = ()


def parse_dockerfile(text: str, where: str = "Dockerfile") -> Dockerfile:
    """Parse the Dockerfile's COPY/ADD, WORKDIR and script-running RUN lines."""
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
    try:
        instructions = list(zip(parser.structure, parser.context_structure))
    except (IndexError, ValueError) as error:
        # dockerfile-parse fails this way on an instruction Docker rejects too (a bare ENV, ARG or LABEL).
        raise ShippingError(
            f"cannot be parsed ({type(error).__name__}: {error})", where=where,
            hint="an ENV, ARG or LABEL line without arguments? 'docker build' rejects those too",
        ) from None
    workdir = "/"
    copies: list[ContextCopy] = []
    runs: list[ScriptRun] = []
    workdirs: list[Workdir] = []
    for instruction, context in instructions:
        kind, value, line = instruction["instruction"], instruction["value"], instruction["startline"] + 1
        # ENV and ARG values in force at this instruction, per stage, as Docker substitutes them.
        variables = {**context.get_values(context_type="ARG"), **context.get_values(context_type="ENV")}
        if kind == "FROM":
            workdir = "/"  # each stage starts afresh; only the last stage ships, but all are read
        elif kind == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, _expand(value.strip(), variables)))
            workdirs.append(Workdir(workdir, line))
        elif kind in ("COPY", "ADD"):
            copy = _copy(kind, value, workdir, line, f"{where}:{line}", variables)
            if copy is not None:
                copies.append(copy)
        elif kind == "RUN":
            runs.extend(_script_runs(value, workdir, line, variables))
    return Dockerfile(tuple(copies), tuple(runs), tuple(workdirs))


def _copy(kind: str, value: str, workdir: str, line: int, where: str,
          variables: dict[str, str] | None = None) -> ContextCopy | None:
    words = _words(value, where, variables or {})
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    if any(f.startswith("--from") for f in flags):
        return None  # copies from another stage or image, not from the context
    if len(paths) < 2:
        raise ShippingError(f"{kind} needs a source and a destination: {value!r}", where=where)
    *sources, destination = paths
    # ADD also fetches URLs and git repositories; those are not context files.
    sources = [s for s in sources if not (kind == "ADD" and _is_remote(s))]
    if not sources:
        return None
    folder = destination.endswith("/") or len(sources) > 1 or names_folder(destination)
    absolute = posixpath.normpath(posixpath.join(workdir, destination))
    return ContextCopy(
        sources=tuple(posixpath.normpath(s.lstrip("/")) for s in sources),
        destination=absolute.rstrip("/") + ("/" if folder else ""),
        line=line,
        instruction=kind,
        flags=tuple(flags),
    )


def names_folder(path: str) -> bool:
    """Whether ``path`` ends in ``.`` or ``..`` (``COPY file .``, ``cp file .``), which is always a folder."""
    return posixpath.basename(path) in (".", "..")


def _is_remote(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def _words(value: str, where: str, variables: dict[str, str] | None = None) -> list[str]:
    """Split COPY/ADD arguments: flags first, then the JSON array or shell words, variables expanded."""
    variables = variables or {}
    stripped = value.strip()
    flags = []
    while stripped.startswith("--"):
        flag, _, stripped = stripped.partition(" ")
        flags.append(flag)
        stripped = stripped.lstrip()
    if stripped.startswith("["):
        # The JSON (exec) form; flags still come first, outside the array.
        if data_nesting_problem(stripped) is not None:  # json recurses per level
            raise ShippingError(f"COPY/ADD has a malformed JSON array, nested too deep: {value[:60]!r}...",
                                where=where)
        try:
            words = json.loads(stripped)
        except json.JSONDecodeError:
            raise ShippingError(f"COPY/ADD has a malformed JSON array: {value!r}", where=where) from None
        if not isinstance(words, list):
            raise ShippingError(f"COPY/ADD has a malformed JSON array: {value!r}", where=where)
        return flags + [_expand(str(w), variables) for w in words]
    try:
        return flags + list(WordSplitter(stripped, args=variables).split())
    except ValueError:
        raise ShippingError(f"COPY/ADD has unbalanced quotes: {value!r}", where=where) from None


def _expand(word: str, variables: dict[str, str]) -> str:
    """Substitute ``$VAR`` and ``${VAR}`` and remove quotes, as Docker does (an unset variable is empty)."""
    if not any(c in word for c in "$\"'\\"):
        return word
    return str(WordSplitter(word, args=variables).dequote())


def _script_runs(command: str, workdir: str, line: int, variables: Mapping[str, str]) -> list[ScriptRun]:
    """Find ``./script``, ``sh script`` and ``bash [-e] script`` in a RUN, following ``cd`` and ``sh -c``.

    ENV and ARG values are the environment a RUN's shell sees, so ``$VAR`` is
    expanded in its words; variables the RUN sets itself stay as written.
    """
    runs = []
    cwd = workdir
    for words in _exec_form(command) or _simple_commands(command, variables):
        if not words:
            continue
        head = words[0]
        if head == "cd" and len(words) > 1:
            cwd = posixpath.normpath(posixpath.join(cwd, words[1]))
        elif posixpath.basename(head) in ("sh", "bash"):
            options, rest = _shell_options(words[1:])
            if any("c" in o for o in options if not o.startswith("--")):
                if rest:  # sh -c 'cd DIR && ./script': the string is a command line of its own
                    runs.extend(_script_runs(rest[0], cwd, line, variables))
            elif rest:
                runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, rest[0])), cwd, line, variables))
        elif "/" in head and not head.startswith("/usr/bin") and not head.startswith("/bin"):
            runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, head)), cwd, line, variables))
        elif head.endswith(".sh"):
            runs.append(ScriptRun(posixpath.normpath(posixpath.join(cwd, head)), cwd, line, variables))
    return runs


def _shell_options(words: list[str]) -> tuple[list[str], list[str]]:
    """Split ``sh``/``bash`` arguments into leading options (``-ex``, ``-o pipefail``) and the rest."""
    options: list[str] = []
    index = 0
    while index < len(words) and words[index][:1] in ("-", "+") and words[index] not in ("-", "--"):
        options.append(words[index])
        index += 2 if words[index] in ("-o", "+o", "-O", "+O") else 1
    if index < len(words) and words[index] == "--":
        index += 1
    return options, words[index:]


def _exec_form(command: str) -> list[list[str]]:
    """``RUN ["./script.sh", "arg"]``: one command, no shell."""
    if not command.strip().startswith("[") or data_nesting_problem(command) is not None:
        return []  # a shell command, or JSON nested too deep to be a list of words (json recurses per level)
    try:
        words = json.loads(command)
    except json.JSONDecodeError:
        return []
    return [[str(w) for w in words]] if isinstance(words, list) else []


def _simple_commands(command: str, variables: Mapping[str, str]) -> list[list[str]]:
    lexer = shlex.shlex(_substitute(command, variables), posix=True, punctuation_chars=";&|")
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


def _substitute(command: str, variables: Mapping[str, str]) -> str:
    """Expand the ``$VAR``/``${VAR}`` that ENV and ARG define; leave others to the shell."""
    def lookup(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return variables.get(name, match.group(0))

    return _VARIABLE.sub(lookup, command)
