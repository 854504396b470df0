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

from ..errors import ShippingError

DOCKERIGNORE = ".dockerignore"
# Patterns times the files they are matched against, at most: a pattern takes microseconds a file, and a
# hostile .dockerignore of 40,000 lines over a large context would take hours.
MAX_PATTERN_PAIRS = 1_000_000


@dataclass(frozen=True)
class IgnoreRule:
    """One line of ``.dockerignore``."""

    pattern: str
    exception: bool  # a "!pattern" line
    glob: "Glob"


def parse_dockerignore(text: str) -> tuple[IgnoreRule, ...]:
    """Read the rules of a ``.dockerignore`` file, in order; raise ShippingError for a pattern that cannot be read."""
    rules = []
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        if exception:
            line = line[1:].strip()
        pattern = posixpath.normpath(line.lstrip("/")) if line.lstrip("/") else "."
        rules.append(IgnoreRule(pattern, exception, Glob(pattern, f"{DOCKERIGNORE}:{number}")))
    return tuple(rules)


def pattern_rules(patterns: list[str], where: str) -> tuple[IgnoreRule, ...]:
    """Rules from patterns given one by one (``COPY --exclude``), each read as a ``.dockerignore`` line is."""
    rules = []
    for pattern in patterns:
        exception = pattern.startswith("!")
        cleaned = posixpath.normpath(pattern[1:] if exception else pattern)
        rules.append(IgnoreRule(cleaned, exception, Glob(cleaned, where)))
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
        if any(rule.glob.fullmatch(candidate) for candidate in candidates):
            ignored = not rule.exception
    return ignored


class Glob:
    """A Docker path pattern, matched in time linear in the path whatever the pattern.

    A regular expression translated naively (``*`` as ``[^/]*``) backtracks
    polynomially in the number of stars: eight of them against a 60-letter
    name took 76 s, and a vendor zip holds both the pattern and the names.
    So a path is matched component by component: a ``**`` component takes
    any number of components, and within a component every star but the
    last takes the shortest run that lets the text after it match, without
    going back (an atomic group: Python 3.10's ``re`` has none, a lookahead
    and a backreference make one). That is exact, since a star within a
    component cannot cross a ``/``: taking the earliest match of each
    segment only leaves more room for the rest. Matching is that of Docker's
    translation (``**/`` is ``(.*/)?``, another ``**`` is ``.*``); a ``**``
    inside a name is read as the two patterns it can mean, within the name
    or across folders.
    """

    def __init__(self, pattern: str, where: str = "pattern") -> None:
        self.pattern = pattern
        tokens = _tokens(pattern)
        inside = sum(1 for index, token in enumerate(tokens) if token in (_DSLASH, _DSTAR)
                     and not _at_boundary(tokens, index))
        if inside > _MAX_INSIDE:
            raise ShippingError(f"pattern {pattern!r} has more than {_MAX_INSIDE} '**' inside names",
                                where=where, hint="write '**/' between folders instead")
        try:
            self._alternatives = [_parts(variant) for variant in _variants(tokens)]
        except re.error as error:
            raise ShippingError(f"pattern {pattern!r} cannot be read: {error}", where=where) from None

    def fullmatch(self, path: str) -> bool:
        """Whether PATH (posix, relative) matches the whole pattern."""
        names = path.split("/")
        return any(_match(parts, names) for parts in self._alternatives)


_MAX_INSIDE = 4  # each '**' inside a name doubles the patterns to try
_DSLASH, _DSTAR, _STAR, _SLASH = "**/", "**", "*", "/"
_ANY, _SOME = "(any folders)", "(at least one)"  # components standing for any number of components


def _tokens(pattern: str) -> list[str]:
    """Split a pattern as Docker's translation reads it, left to right: '**/', '**', '*', '/', or a regex piece."""
    tokens = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith(_DSLASH, index):
            tokens.append(_DSLASH)
            index += 3
            continue
        if pattern.startswith(_DSTAR, index):
            tokens.append(_DSTAR)
            index += 2
            continue
        if char in (_STAR, _SLASH):
            tokens.append(char)
        elif char == "?":
            tokens.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                tokens.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                if body.startswith("^") or body.startswith("!"):
                    body = "^" + body[1:]
                tokens.append(f"[{body}]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            tokens.append(re.escape(pattern[index]))
        else:
            tokens.append(re.escape(char))
        index += 1
    return tokens


def _at_boundary(tokens: list[str], index: int) -> bool:
    """Whether the '**' or '**/' at INDEX starts a component and (a '**') ends the pattern."""
    starts = index == 0 or tokens[index - 1] in (_SLASH, _DSLASH)
    return starts and (tokens[index] == _DSLASH or index == len(tokens) - 1)


def _variants(tokens: list[str]) -> list[list[str]]:
    """The token lists TOKENS stands for, each '**' replaced by whole components of any number."""
    for index, token in enumerate(tokens):
        if token not in (_DSLASH, _DSTAR):
            continue
        before, after = tokens[:index], tokens[index + 1:]
        if _at_boundary(tokens, index):  # '**/' between folders, or a trailing '**'
            whole = [_ANY, _SLASH] if token == _DSLASH else [_SOME]
            return [before + whole + variant for variant in _variants(after)]
        if token == _DSLASH:  # '(.*/)?' inside a name: nothing, or the rest of the name and folders
            ways = [[], [_STAR, _SLASH, _ANY, _SLASH]]
        else:  # '.*' inside a name: within it, or across folders
            ways = [[_STAR], [_STAR, _SLASH, _ANY, _SLASH, _STAR]]
        return [variant for way in ways for variant in _variants(before + way + after)]
    return [tokens]


def _parts(tokens: list[str]) -> list[str | re.Pattern[str]]:
    """One regex per path component, or _ANY/_SOME for a run of components."""
    parts: list[str | re.Pattern[str]] = []
    component: list[str] = []
    for token in [*tokens, _SLASH]:
        if token != _SLASH:
            component.append(token)
        elif component in ([_ANY], [_SOME]):
            parts.append(component[0])
            component = []
        else:
            parts.append(re.compile(_component_regex(component), re.DOTALL))
            component = []
    return parts


def _component_regex(tokens: list[str]) -> str:
    """A regular expression for one component's tokens; every run of stars but the last atomic."""
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token == _STAR:
            if segments[-1] or len(segments) == 1:
                segments.append([])
        else:
            segments[-1].append(token)
    texts = ["".join(segment) for segment in segments]
    if len(texts) == 1:
        return texts[0]
    first, *middle, final = texts
    atomic = "".join(f"(?=(?P<s{n}>.*?{segment}))(?P=s{n})" for n, segment in enumerate(middle))
    return first + atomic + ".*" + final


def _match(parts: list[str | re.Pattern[str]], names: list[str]) -> bool:
    """Whether the parts match the path components NAMES, each reachable position kept once."""
    reach = {0}
    count = len(names)
    for part in parts:
        if isinstance(part, str):
            start = min(reach) + (part == _SOME)
            reach = set(range(start, count + 1))
        else:
            reach = {index + 1 for index in reach if index < count and part.fullmatch(names[index])}
        if not reach:
            return False
    return count in reach


def glob_regex(pattern: str) -> Glob:
    """A COPY source pattern (Go's filepath.Match: ``*`` stays within a component), matched as ``Glob`` does."""
    return Glob(pattern, "COPY source")


def has_glob(pattern: str) -> bool:
    """Whether a COPY source uses wildcards."""
    return any(c in pattern for c in "*?[")
