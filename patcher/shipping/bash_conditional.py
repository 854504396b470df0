"""bash's ``[[ EXPRESSION ]]``: its tests, decided where the build's files and known values decide them.

Unlike ``[``, its words are neither split nor globbed, the right side of
``==``, ``=`` and ``!=`` is a pattern (what is quoted in it matches as
written), ``-eq`` and the other integer tests read arithmetic (``010`` is
8), and ``&&``, ``||``, ``!`` and parentheses combine tests. What the
reader cannot decide (an unknown value, ``=~``, ``<`` and ``>`` that
collate by the image's locale, file times) is None, and combines as
unknown: ``None && False`` is False, ``None || True`` is True.
"""

from __future__ import annotations

from .output_builtins import decide_test
from .shell_arithmetic import evaluate
from .shell_interpreter import Shell
from .shell_nodes import Conditional, Logic, Test
from .shell_words import is_known, pattern_regex, variable_text

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
    right = shell.expand_one(test.words[1])
    if test.op in _INTEGER:
        if not is_known(left) or not is_known(right):
            return None
        values = [evaluate(side, lambda name: variable_text(name, shell)) for side in (left, right)]
        if None in values:
            return None
        return decide_test(shell, [str(values[0]), test.op, str(values[1])])
    return None  # =~, <, > (the image's locale collates), -nt, -ot, -ef
