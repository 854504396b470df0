"""Apply ``.dockerignore``: files it excludes are never sent with the build context.

The rules are Docker's (moby/patternmatcher): one pattern a line, ``#``
comments, ``*`` and ``?`` within one path component, ``**`` across any
number of them, a leading ``!`` re-including what earlier lines excluded,
the last matching line deciding. A pattern that names a folder excludes
everything under it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

DOCKERIGNORE = ".dockerignore"


@dataclass(frozen=True)
class IgnoreRule:
    """One line of ``.dockerignore``."""

    pattern: str
    exception: bool  # a "!pattern" line
    regex: re.Pattern[str]


def parse_dockerignore(text: str) -> tuple[IgnoreRule, ...]:
    """Read the rules of a ``.dockerignore`` file, in order."""
    rules = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        if exception:
            line = line[1:].strip()
        pattern = posixpath.normpath(line.lstrip("/")) if line.lstrip("/") else "."
        rules.append(IgnoreRule(pattern, exception, re.compile(_translate(pattern))))
    return tuple(rules)


def is_ignored(rules: tuple[IgnoreRule, ...], path: str) -> bool:
    """Whether the context file ``path`` is excluded from the build context."""
    candidates = [path]
    parent = posixpath.dirname(path)
    while parent:
        candidates.append(parent)
        parent = posixpath.dirname(parent)
    ignored = False
    for rule in rules:
        if any(rule.regex.fullmatch(candidate) for candidate in candidates):
            ignored = not rule.exception
    return ignored


def _translate(pattern: str) -> str:
    """Turn a Docker path pattern into a regular expression over posix paths."""
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                if body.startswith("^") or body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A COPY source pattern (Go's filepath.Match: ``*`` stays within a component) as a regex."""
    return re.compile(_translate(pattern))


def has_glob(pattern: str) -> bool:
    """Whether a COPY source uses wildcards."""
    return any(c in pattern for c in "*?[")
