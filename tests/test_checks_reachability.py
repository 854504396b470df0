"""Which branches cannot run: straight-line reasoning, and every way a name can be rebound in between."""

from __future__ import annotations

import textwrap

import pytest

from patcher.checks.base import PythonSource
from patcher.checks.v2_needs_fallback import V2NeedsFallback
from patcher.checks.examples import example_settings


def _why(code: str) -> str | None:
    """Why the one call of ``target()`` in ``code`` cannot run, or None."""
    source = PythonSource("t.py", textwrap.dedent(code).encode())
    calls = source.index.calls("target")
    assert len(calls) == 1
    return source.reachability.dead(calls[0])


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
def test_dead_branches(code: str, why: str) -> None:
    assert _why(code) == why


@pytest.mark.parametrize("code", [
    # Not a literal; a parameter; a module-level name (other modules can set it).
    "def f(n):\n    use_v1 = n < 8192\n    if use_v1:\n        pass\n    else:\n        target()\n",
    "def f(use_v1=True):\n    if not use_v1:\n        target()\n",
    "use_v1 = True\nif not use_v1:\n    target()\n",
    "class A:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
    # A reassignment on some path in between, of any kind.
    "def f(n):\n    use_v1 = True\n    if n:\n        use_v1 = False\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    use_v1 &= n\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    if (use_v1 := n):\n        pass\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    print([(use_v1 := x) for x in n])\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    del use_v1\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    for use_v1 in n:\n        pass\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    with n as use_v1:\n        pass\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    try:\n        n()\n    except Exception as use_v1:\n        pass\n"
    "    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    try:\n        pass\n    finally:\n        import use_v1\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    from config import use_v1\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    from config import *\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    def use_v1():\n        pass\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    use_v1, x = n\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    match n:\n        case use_v1:\n            pass\n    if not use_v1:\n        target()\n",
    # The back edge: a later pass of the loop sees a reassignment made after the test.
    "def f(n):\n    use_v1 = True\n    for x in n:\n        if not use_v1:\n            target()\n        use_v1 = x\n",
    "def f(n):\n    use_v1 = True\n    while n:\n        if not use_v1:\n            target()\n        if n:\n            use_v1 = n\n",
    # global / nonlocal, and a nested function that rebinds it.
    "def f(n):\n    global use_v1\n    use_v1 = True\n    n()\n    if not use_v1:\n        target()\n",
    "def f(n):\n    use_v1 = True\n    def g():\n        nonlocal use_v1\n        use_v1 = False\n    g()\n"
    "    if not use_v1:\n        target()\n",
    # A handler runs after any part of the try body.
    "def f(n):\n    use_v1 = True\n    try:\n        use_v1 = n()\n    except ValueError:\n        if not use_v1:\n"
    "            target()\n",
    # Unclear tests.
    "def f(n):\n    use_v1 = True\n    if use_v1 is False:\n        target()\n",
    "def f(self):\n    self.use_v1 = True\n    if not self.use_v1:\n        target()\n",
])
def test_live_branches(code: str) -> None:
    assert _why(code) is None


def test_a_dead_v2_call_is_a_note_that_says_why() -> None:
    code = "def f():\n    use_v1 = True\n    if use_v1:\n        ops.paged_attention_v1(o)\n    else:\n" \
           "        ops.paged_attention_v2(o)\n"
    rule = V2NeedsFallback()
    found = list(rule.check_file(PythonSource("t.py", code.encode()), example_settings(rule)))
    assert [(v.severity.value, v.line, v.message) for v in found] == [
        ("note", 6, "ops.paged_attention_v2 at line 6 cannot run: `use_v1` is always True here (line 2)")]


def test_a_fallback_that_cannot_run_is_no_fallback() -> None:
    code = ("def f():\n    try:\n        ops.paged_attention_v2(o)\n    except NotImplementedError:\n"
            "        if False:\n            ops.paged_attention_v1(o)\n")
    rule = V2NeedsFallback()
    found = list(rule.check_file(PythonSource("t.py", code.encode()), example_settings(rule)))
    assert [(v.severity.value, v.line) for v in found] == [("error", 3)]
    assert "falls through, but no ops.paged_attention_v1 call follows" in found[0].message


def test_type_checking_imports_never_run() -> None:
    assert _why("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    target()\n") == \
        "`TYPE_CHECKING` is False when the code runs"
    assert _why("import typing\nif not typing.TYPE_CHECKING:\n    pass\nelse:\n    target()\n") == \
        "`TYPE_CHECKING` is False when the code runs"
