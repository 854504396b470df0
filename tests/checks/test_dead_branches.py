"""Which branches cannot run: a test that is a literal, ``TYPE_CHECKING``, or a local whose only reaching value is a literal.

The reason names the name and the line that set it, or the literal test;
``and``/``or`` are decided by one side or by both, and the innermost dead
branch says why. A test that is known true leaves its branch live.
"""

from __future__ import annotations

import pytest

from tests.fixtures_rules import why_dead

ALWAYS_TRUE = "`use_v1` is always True here (line 2)"


@pytest.mark.parametrize("code, why", [
    ("""
     def f():
         use_v1 = True
         if use_v1:
             pass
         else:
             target()
     """, "`use_v1` is always True here (line 3)"),
    ("""
     def f():
         use_v1 = (True)
         if not use_v1:
             target()
     """, "`use_v1` is always True here (line 3)"),
    ("""
     def f():
         flag: bool = False
         x = 1
         if flag:
             target()
     """, "`flag` is always False here (line 3)"),
    ("""
     def f():
         a = b = 0
         if b and other():
             target()
     """, "`b` is always 0 here (line 3)"),
    ("if False:\n    target()\n", "its test `False` is always false"),
    ("if 0:\n    target()\n", "its test `0` is always false"),
    ("if True:\n    pass\nelse:\n    target()\n", "its test `True` is always true"),
    ("x = target() if False else 1\n", "its test `False` is always false"),
    # The test is inside a loop, but the literal is set again on every pass before it.
    ("""
     def f(items):
         for item in items:
             use_v1 = True
             if not use_v1:
                 target()
             use_v1 = item
     """, "`use_v1` is always True here (line 4)"),
    # Nested blocks: the assignment is before the enclosing statement.
    ("""
     def f(q):
         use_v1 = True
         with q:
             if q:
                 if use_v1:
                     pass
                 else:
                     target()
     """, "`use_v1` is always True here (line 3)"),
])
def test_a_branch_whose_test_is_always_false_cannot_run(code: str, why: str) -> None:
    assert why_dead(code) == why


@pytest.mark.parametrize("code, why", [
    ("x = target() if True else 1\n", None),
    ("x = 1 if True else target()\n", "its test `True` is always true"),
    ("if None:\n    target()\n", "its test `None` is always false"),
    ("if 'v1':\n    pass\nelse:\n    target()\n", "its test `'v1'` is always true"),
    # The innermost dead branch says why.
    ("if False:\n    if True:\n        pass\n    else:\n        target()\n", "its test `True` is always true"),
    ("if True:\n    if False:\n        target()\n", "its test `False` is always false"),
    # The test itself runs whenever the `if` is reached.
    ("if False and target():\n    pass\n", None),
    ("def f():\n    use_v1 = True\n    x = 1 if use_v1 else target()\n", ALWAYS_TRUE),
    # The statement holding the test binds the name itself: not trusted.
    ("def f():\n    use_v1 = True\n    x = (use_v1 := 0) or (1 if use_v1 else target())\n", None),
])
def test_conditional_expressions_and_nested_branches_are_decided_by_their_own_test(code: str, why: str | None) -> None:
    assert why_dead(code) == why


@pytest.mark.parametrize("test, why", [
    ("use_v1 or n", ALWAYS_TRUE),
    ("n or use_v1", ALWAYS_TRUE),
    ("use_v1 and True", f"{ALWAYS_TRUE}; its test `True` is always true"),
    ("n and use_v1", None),
    ("not (n or use_v1)", None),
])
def test_and_or_are_decided_by_one_side_or_by_both(test: str, why: str | None) -> None:
    code = f"def f(n):\n    use_v1 = True\n    if {test}:\n        pass\n    else:\n        target()\n"
    assert why_dead(code) == why


def test_an_and_or_of_false_parts_names_each_of_them() -> None:
    code = "def f(n):\n    use_v1 = False\n    off = 0\n    if use_v1 or off:\n        target()\n"
    assert why_dead(code) == "`use_v1` is always False here (line 2); `off` is always 0 here (line 3)"
    code = "def f(n):\n    use_v1 = False\n    if n and use_v1:\n        target()\n"
    assert why_dead(code) == "`use_v1` is always False here (line 2)"


def test_a_branch_taken_when_the_test_is_known_true_runs() -> None:
    assert why_dead("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    target()\n") is None
    assert why_dead("def f():\n    use_v1 = True\n    if use_v1 and True:\n        target()\n") is None
    assert why_dead("def f():\n    use_v1 = False\n    if use_v1 or 0:\n        pass\n    else:\n        target()\n") is None


def test_the_latest_assignment_is_the_one_that_counts() -> None:
    code = "def f():\n    use_v1 = False\n    use_v1 = True\n    if not use_v1:\n        target()\n"
    assert why_dead(code) == "`use_v1` is always True here (line 3)"
    nested = "def f(n):\n    if n:\n        use_v1 = True\n    if not use_v1:\n        target()\n"
    assert why_dead(nested) is None  # set on one path only


def test_an_ellipsis_is_no_literal() -> None:
    assert why_dead("def f():\n    use_v1 = ...\n    if not use_v1:\n        target()\n") is None


def test_type_checking_blocks_never_run() -> None:
    assert why_dead("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    target()\n") == \
        "`TYPE_CHECKING` is False when the code runs"
    assert why_dead("import typing\nif not typing.TYPE_CHECKING:\n    pass\nelse:\n    target()\n") == \
        "`TYPE_CHECKING` is False when the code runs"


@pytest.mark.parametrize("code, why", [
    ("while False:\n    target()\n", "its test `False` is always false"),
    ("def f():\n    retry = False\n    while retry:\n        target()\n", "`retry` is always False here (line 2)"),
    ("while 0:\n    pass\nelse:\n    target()\n", None),
    ("def f(q):\n    while q:\n        target()\n", None),
    ("while True:\n    target()\n", None),
])
def test_the_body_of_a_loop_whose_test_is_false_on_entry_cannot_run(code: str, why: str | None) -> None:
    assert why_dead(code) == why
