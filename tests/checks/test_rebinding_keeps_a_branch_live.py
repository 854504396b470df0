"""A branch stays live when its name may hold something else: a parameter, a module or class name, or any binding on a path
between the literal and the test (assignment of any kind, ``del``, imports, ``for``/``with``/``except`` targets, ``match``
captures, a nested ``def`` or ``class``, a loop's back edge, ``global``/``nonlocal``).

Most cases come in pairs: the same block dead without the rebinding and
live with it.
"""

from __future__ import annotations

import textwrap

import pytest

from patcher.checks.base import PythonSource

from tests.fixtures_rules import why_dead

ALWAYS_TRUE = "`use_v1` is always True here (line 2)"


@pytest.mark.parametrize("code", [
    # Not a literal; a parameter; a module-level name that a function rebinds (see test_module_flags.py).
    "def f(n):\n    use_v1 = n < 8192\n    if use_v1:\n        pass\n    else:\n        target()\n",
    "def f(use_v1=True):\n    if not use_v1:\n        target()\n",
    "use_v1 = True\ndef g():\n    global use_v1\n    use_v1 = False\nif not use_v1:\n    target()\n",
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
def test_a_name_that_may_hold_something_else_leaves_the_branch_live(code: str) -> None:
    assert why_dead(code) is None


def _in_function(body: str) -> str:
    """``body`` inside ``def forward_decode(n):`` after ``use_v1 = True`` (line 2)."""
    return "def forward_decode(n):\n    use_v1 = True\n" + textwrap.indent(textwrap.dedent(body), "    ")


# Each entry: the block around the test, with and without something that binds use_v1 before it runs.
PAIRS = {
    "if test": ("if n:\n    if not use_v1:\n        target()\n",
                "if (use_v1 := n):\n    if not use_v1:\n        target()\n"),
    "with item": ("with open(n) as log:\n    if not use_v1:\n        target()\n",
                  "with open(n) as use_v1:\n    if not use_v1:\n        target()\n"),
    "try body": ("try:\n    if not use_v1:\n        target()\nexcept ValueError:\n    use_v1 = False\n",
                 "use_v1 = n\ntry:\n    if not use_v1:\n        target()\nexcept ValueError:\n    pass\n"),
    "try else": ("try:\n    n()\nexcept ValueError:\n    pass\nelse:\n    if not use_v1:\n        target()\n",
                 "try:\n    n()\nexcept ValueError:\n    use_v1 = False\nelse:\n    if not use_v1:\n        target()\n"),
    "finally": ("try:\n    n()\nfinally:\n    if not use_v1:\n        target()\n",
                "try:\n    use_v1 = n()\nfinally:\n    if not use_v1:\n        target()\n"),
    "handler": ("try:\n    n()\nexcept ValueError as error:\n    if not use_v1:\n        target()\n",
                "try:\n    n()\nexcept ValueError as use_v1:\n    if not use_v1:\n        target()\n"),
    "bare handler": ("try:\n    n()\nexcept:\n    if not use_v1:\n        target()\n",
                     "try:\n    n()\nexcept (use_v1 := ValueError):\n    if not use_v1:\n        target()\n"),
    "match subject": ("match n:\n    case 1:\n        if not use_v1:\n            target()\n",
                      "match (use_v1 := n):\n    case 1:\n        if not use_v1:\n            target()\n"),
    "case pattern": ("match n:\n    case [first, *rest]:\n        if not use_v1:\n            target()\n",
                     "match n:\n    case [first, *use_v1]:\n        if not use_v1:\n            target()\n"),
    "case mapping": ("match n:\n    case {'v1': 1, **rest}:\n        if not use_v1:\n            target()\n",
                     "match n:\n    case {'v1': 1, **use_v1}:\n        if not use_v1:\n            target()\n"),
    "case capture": ("match n:\n    case (1 | 2) as size:\n        if not use_v1:\n            target()\n",
                     "match n:\n    case (1 | 2) as use_v1:\n        if not use_v1:\n            target()\n"),
    "case guard": ("match n:\n    case int() if n > 8192:\n        if not use_v1:\n            target()\n",
                   "match n:\n    case int() if (use_v1 := n):\n        if not use_v1:\n            target()\n"),
    "unguarded case": ("match n:\n    case int():\n        if not use_v1:\n            target()\n",
                       "match n:\n    case use_v1:\n        if not use_v1:\n            target()\n"),
    "nested def": ("def helper():\n    use_v1 = False\nif not use_v1:\n    target()\n",
                   "def helper(flag=(use_v1 := False)):\n    pass\nif not use_v1:\n    target()\n"),
    "keyword default": ("def helper(*, flag=False):\n    pass\nif not use_v1:\n    target()\n",
                        "def helper(*, flag=(use_v1 := False)):\n    pass\nif not use_v1:\n    target()\n"),
    "decorator": ("@functools.cache\ndef helper():\n    pass\nif not use_v1:\n    target()\n",
                  "@(use_v1 := functools.cache)\ndef helper():\n    pass\nif not use_v1:\n    target()\n"),
    "lambda": ("pick = lambda flag=False: (use_v1 := flag)\nif not use_v1:\n    target()\n",
               "pick = lambda flag=(use_v1 := False): flag\nif not use_v1:\n    target()\n"),
    "lambda keyword": ("pick = lambda *, flag=False: flag\nif not use_v1:\n    target()\n",
                       "pick = lambda *, flag=(use_v1 := False): flag\nif not use_v1:\n    target()\n"),
    "class": ("class Config:\n    use_v1 = False\nif not use_v1:\n    target()\n",
              "class Config((use_v1 := object)):\n    pass\nif not use_v1:\n    target()\n"),
    "nested global": ("def helper():\n    global other\n    other = 1\nif not use_v1:\n    target()\n",
                      "def helper():\n    global use_v1\n    use_v1 = False\nif not use_v1:\n    target()\n"),
    "import": ("import vllm.use_v2\nif not use_v1:\n    target()\n",
               "import use_v1.config\nif not use_v1:\n    target()\n"),
    "import as": ("from config import use_v1 as configured\nif not use_v1:\n    target()\n",
                  "from config import flag as use_v1\nif not use_v1:\n    target()\n"),
    "attribute": ("self.use_v1 = False\nif not use_v1:\n    target()\n",
                  "use_v1: bool\nif not use_v1:\n    target()\n"),
    "other target": ("x = False\nif not use_v1:\n    target()\n",
                     "x = (use_v1 := False)\nif not use_v1:\n    target()\n"),
    "subscript target": ("cache[0] = False\nif not use_v1:\n    target()\n",
                         "use_v1 = cache[0] = False\nif not use_v1:\n    target()\n"),
    "class def": ("class Flag:\n    pass\nif not use_v1:\n    target()\n",
                  "class use_v1:\n    pass\nif not use_v1:\n    target()\n"),
    "async def": ("async def helper():\n    pass\nif not use_v1:\n    target()\n",
                  "async def use_v1():\n    pass\nif not use_v1:\n    target()\n"),
}


@pytest.mark.parametrize("block", sorted(PAIRS))
def test_a_branch_is_dead_until_something_on_the_path_rebinds_the_name(block: str) -> None:
    dead, live = PAIRS[block]
    assert why_dead(_in_function(dead)) == ALWAYS_TRUE
    assert why_dead(_in_function(live)) is None


def test_a_global_anywhere_in_the_function_makes_the_name_shared() -> None:
    code = _in_function("if not use_v1:\n    target()\ndef later():\n    global use_v1\n")
    assert why_dead(code) is None
    assert why_dead(_in_function("if not use_v1:\n    target()\ndef later():\n    global other\n")) == ALWAYS_TRUE


def test_each_function_has_its_own_globals() -> None:
    code = ("def first():\n    global use_v1\n    use_v1 = True\n    if not use_v1:\n        target(1)\n\n"
            "def second():\n    use_v1 = True\n    if not use_v1:\n        target(2)\n")
    source = PythonSource("paged_attn.py", code.encode())
    first, second = source.index.calls("target")
    assert source.reachability.dead(first) is None
    assert source.reachability.dead(second) == "`use_v1` is always True here (line 8)"


@pytest.mark.parametrize("block", [
    "if n:\n    pass\nelse:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
    "try:\n    n()\nfinally:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
    "for item in n:\n    pass\nelse:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
])
def test_an_assignment_earlier_in_an_else_or_finally_block_counts(block: str) -> None:
    code = "def forward_decode(n):\n" + textwrap.indent(block, "    ")
    assert why_dead(code) == "`use_v1` is always True here (line 5)"


def test_only_one_case_of_a_match_runs() -> None:
    code = _in_function("match n:\n    case 1:\n        use_v1 = False\n    case _:\n        if not use_v1:\n"
                        "            target()\n")
    assert why_dead(code) == ALWAYS_TRUE
