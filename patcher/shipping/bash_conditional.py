"""bash's ``[[ EXPRESSION ]]``: its tests, decided where the build's files and known values decide them.

Unlike ``[``, its words are neither split nor globbed, the right side of
``==``, ``=`` and ``!=`` is a pattern (what is quoted in it matches as
written), ``-eq`` and the other integer tests read arithmetic (``010`` is
8), and ``&&``, ``||``, ``!`` and parentheses combine tests. What the
reader cannot decide (an unknown value, ``<`` and ``>`` that collate by
the image's locale, file times) is None, and combines as unknown: ``None
&& False`` is False, ``None || True`` is True. ``=~`` matches a POSIX
extended regular expression anywhere in the left side (what is quoted in
it matches as written) and sets ``BASH_REMATCH``; a form Python's ``re``
might read otherwise than glibc's (a backslash before a letter, a
back-reference, a class it does not name) is None.
"""

from __future__ import annotations

import re

from .output_builtins import decide_test
from .shell_arithmetic import evaluate
from .shell_interpreter import Shell
from .shell_nodes import Conditional, Lit, Logic, Test, Word
from .shell_words import is_known, pattern_regex, tilde_expanded, variable_text

_INTEGER = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def conditional(shell: Shell, node: Conditional) -> bool | None:
    """The status of ``[[ ... ]]``: True, False, or None when the image decides."""
    return _value(shell, node.expression)


def _value(shell: Shell, expression: Test | Logic) -> bool | None:
    if isinstance(expression, Test):
        return _test(shell, expression)
    results = [_value(shell, part) for part in expression.parts]  # each part's expansions run
    if expression.op == "!":
        return None if results[0] is None else not results[0]
    decisive = expression.op == "||"  # True decides an ||, False an &&
    return decisive if decisive in results else None if None in results else not decisive


def _test(shell: Shell, test: Test) -> bool | None:
    # Each word is expanded once (its substitutions run, whatever the test reads); a pattern expands itself.
    left = shell.expand_one(test.words[0])
    if not test.op:
        return (left != "") if is_known(left) else None
    if len(test.words) == 1:
        return decide_test(shell, [test.op, left]) if test.op in ("-a", "-d", "-e", "-f", "-n", "-z") else None
    if test.op in ("==", "=", "!="):
        pattern = pattern_regex(test.words[1], shell, len(left))
        if pattern is None or not is_known(left):
            return None
        return (pattern.fullmatch(left) is not None) == (test.op != "!=")
    if test.op == "=~":
        return _matches(shell, left, test.words[1])
    right = shell.expand_one(test.words[1])
    if test.op in _INTEGER:
        if not is_known(left) or not is_known(right):
            return None
        values = [evaluate(side, lambda name: variable_text(name, shell)) for side in (left, right)]
        if None in values:
            return None
        return decide_test(shell, [str(values[0]), test.op, str(values[1])])
    return None  # <, > (the image's locale collates), -nt, -ot, -ef


# POSIX bracket classes, as the C and UTF-8 locales read them for ASCII text.
_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
            "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "xdigit": "0-9A-Fa-f",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")}
_CLASS = re.compile(r"\[:([a-z]+):\]")


def _matches(shell: Shell, left: str, word: Word) -> bool | None:
    """``[[ LEFT =~ REGEX ]]``: whether REGEX matches somewhere in LEFT; BASH_REMATCH gets the match and groups."""
    pieces: list[str] = []
    for part in tilde_expanded(word, shell):  # '[[ $HOME =~ ~ ]]': a '~' starting the pattern is $HOME
        text = part.text if isinstance(part, Lit) else shell.expand_one((part,))
        if not is_known(text):
            shell.assign_array("BASH_REMATCH", None)
            return None
        pieces.append(re.escape(text) if part.quoted else text)
    pattern = _python_regex("".join(pieces))
    if pattern is None or not is_known(left) or len(left) > _MAX_SUBJECT:
        shell.assign_array("BASH_REMATCH", None)
        return None
    found = pattern.search(left)
    if found is None:
        shell.assign_array("BASH_REMATCH", [])
        return False
    # POSIX takes the longest of the leftmost matches; Python the first alternative that matches: with '|',
    # where the match ends (and what each group holds) may differ, so only whether it matched is kept.
    groups = [found.group(0), *(g or "" for g in found.groups())]
    shell.assign_array("BASH_REMATCH", None if "|" in pattern.pattern else groups)
    return True


# A script is untrusted: Python's re backtracks, so a quantified group that holds a quantifier or an
# alternative ('(a+)+$', '(a|a)*') could take exponential time on a long subject. Such a pattern, a pattern
# past this length, or a subject past this one, is left to the image (None).
_MAX_PATTERN = 1000
_MAX_SUBJECT = 4096


def _backtracks(ere: str) -> bool:
    """Whether a group that holds a quantifier or a '|' is itself quantified."""
    opened: list[int] = []
    index = 0
    while index < len(ere):
        char = ere[index]
        if char == "\\":
            index += 2
            continue
        if char == "(":
            opened.append(index)
        elif char == ")" and opened:
            inner = ere[opened.pop() + 1:index]
            if ere[index + 1:index + 2] in ("*", "+", "?", "{") and re.search(r"[*+?{|]", inner):
                return True
        index += 1
    return False


def _python_regex(ere: str) -> re.Pattern[str] | None:
    """A POSIX extended regular expression as Python's ``re``, or None where the two could read it otherwise."""
    if len(ere) > _MAX_PATTERN or _backtracks(ere):
        return None
    if re.search(r"\\[A-Za-z0-9]|\(\?|\[[.=]|\[\^?\]?[^\]]*\\", ere):
        # \d, \w, \1 (glibc's own meanings), (?...) (Python's), [. .] and [= =] (collating), and a backslash
        # inside brackets (a backslash to POSIX, an escape to Python)
        return None
    def classes(found: re.Match[str]) -> str:
        return _CLASSES.get(found.group(1), "\x00")
    converted = _CLASS.sub(classes, ere)
    if "\x00" in converted:
        return None  # a class the table does not name
    try:
        return re.compile(converted)
    except (re.error, RecursionError, OverflowError):
        return None
