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

from typing import Union

from .output_builtins import decide_test
from .shell_arithmetic import evaluate
from .shell_interpreter import Shell
from .shell_nodes import Conditional, Word, plain_text
from .shell_syntax import COND_BINARY, COND_UNARY
from .shell_words import is_known, pattern_regex, variable_text

Item = Union[Word, str]

_INTEGER = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def conditional(shell: Shell, node: Conditional) -> bool | None:
    """The status of ``[[ ... ]]``: True, False, or None when the image decides."""
    return _Evaluator(shell, node.items).run()


class _Evaluator:
    def __init__(self, shell: Shell, items: tuple[Item, ...]):
        self.shell = shell
        self.items = items
        self.index = 0

    def run(self) -> bool | None:
        if not self.items:
            return False  # bash refuses an empty [[ ]] (a syntax error): the command fails
        result = self._or()
        if self.index != len(self.items):
            return None  # a form the reader does not read: bash would refuse it or read more
        return result

    def _peek(self) -> str | None:
        """The next item as an operator or an unquoted word's text; None for any other word or the end."""
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        return item if isinstance(item, str) else plain_text(item)

    def _or(self) -> bool | None:
        result = self._and()
        while self._peek() == "||":
            self.index += 1
            other = self._and()
            result = True if True in (result, other) else None if None in (result, other) else False
        return result

    def _and(self) -> bool | None:
        result = self._not()
        while self._peek() == "&&":
            self.index += 1
            other = self._not()
            result = False if False in (result, other) else None if None in (result, other) else True
        return result

    def _not(self) -> bool | None:
        if self._peek() == "!":
            self.index += 1
            result = self._not()
            return None if result is None else not result
        return self._primary()

    def _primary(self) -> bool | None:
        head = self._peek()
        if head == "(":
            self.index += 1
            result = self._or()
            if self._peek() != ")":
                self.index = len(self.items) + 1  # unbalanced: not read
                return None
            self.index += 1
            return result
        if head in COND_UNARY and self.index + 1 < len(self.items) and not isinstance(self.items[self.index + 1], str):
            # bash reads a unary test first: '-f == -f' is -f of '==', then a word too many (its syntax error)
            operand = self._word(self.index + 1)
            self.index += 2
            return decide_test(self.shell, [head, operand]) if head in ("-a", "-d", "-e", "-f", "-n", "-z") else None
        if self.index >= len(self.items) or isinstance(self.items[self.index], str):
            self.index = len(self.items) + 1
            return None
        operator = self._binary_after(self.index)
        if operator is None:
            text = self._word(self.index)
            self.index += 1
            return (text != "") if is_known(text) else None
        left, right = self.items[self.index], self.items[self.index + 2]
        self.index += 3
        assert not isinstance(left, str) and not isinstance(right, str)
        return self._binary(operator, left, right)

    def _binary_after(self, index: int) -> str | None:
        """The binary operator after the word at ``index`` (with a word after it), else None."""
        if index + 2 >= len(self.items):
            return None
        operator = self.items[index + 1]
        name = operator if isinstance(operator, str) else plain_text(operator)
        if name in COND_BINARY:
            return name if not isinstance(self.items[index + 2], str) else None
        return None

    def _word(self, index: int) -> str:
        item = self.items[index]
        assert not isinstance(item, str)
        return self.shell.expand_one(item)

    def _binary(self, operator: str, left: Word, right: Word) -> bool | None:
        text = self.shell.expand_one(left)
        if operator in ("==", "=", "!="):
            if not is_known(text):
                return None
            pattern = pattern_regex(right, self.shell, len(text))
            if pattern is None:
                return None
            return (pattern.fullmatch(text) is not None) == (operator != "!=")
        if operator in _INTEGER:
            other = self.shell.expand_one(right)
            if not is_known(text) or not is_known(other):
                return None
            values = [evaluate(side, lambda name: variable_text(name, self.shell)) for side in (text, other)]
            if None in values:
                return None
            return decide_test(self.shell, [str(values[0]), operator, str(values[1])])
        self.shell.expand_one(right)  # its substitutions run, whatever the reader makes of the test
        return None  # =~, <, > (the image's locale collates), -nt, -ot, -ef
