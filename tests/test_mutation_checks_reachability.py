"""Which branches cannot run, block by block: each way a name is rebound on the path, beside the same code without it.

Written against the survivors of a mutation run of ``patcher/checks/reachability.py``;
most cases come in pairs, dead without the rebinding and live with it.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from patcher.checks.base import PythonSource

ALWAYS_TRUE = "`use_v1` is always True here (line 2)"


def _why(code: str) -> str | None:
    """Why the one call of ``target()`` in ``code`` cannot run, or None."""
    source = PythonSource("paged_attn.py", textwrap.dedent(code).encode())
    (call,) = source.index.calls("target")
    return source.reachability.dead(call)


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
    assert _why(_in_function(dead)) == ALWAYS_TRUE
    assert _why(_in_function(live)) is None


def test_a_global_anywhere_in_the_function_makes_the_name_shared() -> None:
    code = _in_function("if not use_v1:\n    target()\ndef later():\n    global use_v1\n")
    assert _why(code) is None
    assert _why(_in_function("if not use_v1:\n    target()\ndef later():\n    global other\n")) == ALWAYS_TRUE


def test_the_latest_assignment_is_the_one_that_counts() -> None:
    code = "def f():\n    use_v1 = False\n    use_v1 = True\n    if not use_v1:\n        target()\n"
    assert _why(code) == "`use_v1` is always True here (line 3)"
    nested = "def f(n):\n    if n:\n        use_v1 = True\n    if not use_v1:\n        target()\n"
    assert _why(nested) is None  # set on one path only


def test_an_ellipsis_is_no_literal() -> None:
    assert _why("def f():\n    use_v1 = ...\n    if not use_v1:\n        target()\n") is None


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
def test_conditional_expressions_literals_and_nesting(code: str, why: str | None) -> None:
    assert _why(code) == why


@pytest.mark.parametrize("test, why", [
    ("use_v1 or n", ALWAYS_TRUE),
    ("n or use_v1", ALWAYS_TRUE),
    ("use_v1 and True", f"{ALWAYS_TRUE}; its test `True` is always true"),
    ("n and use_v1", None),
    ("not (n or use_v1)", None),
])
def test_and_or_are_decided_by_one_side_or_by_both(test: str, why: str | None) -> None:
    code = f"def f(n):\n    use_v1 = True\n    if {test}:\n        pass\n    else:\n        target()\n"
    assert _why(code) == why


def test_and_or_of_false_parts() -> None:
    code = "def f(n):\n    use_v1 = False\n    off = 0\n    if use_v1 or off:\n        target()\n"
    assert _why(code) == "`use_v1` is always False here (line 2); `off` is always 0 here (line 3)"
    code = "def f(n):\n    use_v1 = False\n    if n and use_v1:\n        target()\n"
    assert _why(code) == "`use_v1` is always False here (line 2)"


def test_value_of_gives_the_expression_a_local_holds() -> None:
    code = ("def forward_decode(n):\n    limit = 32 * 1024\n    max_len = n\n    if n > limit:\n        run(limit)\n"
            "    limit: int\n    run(limit)\n")
    source = PythonSource("paged_attn.py", code.encode())
    first, second = source.index.calls("run")
    found = source.reachability.value_of("limit", first)
    assert isinstance(found, ast.BinOp) and source.code(found) == "32 * 1024"
    assert source.reachability.value_of("max_len", first) is not None
    assert source.reachability.value_of("limit", second) is None
    assert source.reachability.value_of("absent", first) is None


@pytest.mark.parametrize("block", [
    "if n:\n    pass\nelse:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
    "try:\n    n()\nfinally:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
    "for item in n:\n    pass\nelse:\n    use_v1 = True\n    if not use_v1:\n        target()\n",
])
def test_an_assignment_earlier_in_an_else_or_finally_block_counts(block: str) -> None:
    code = "def forward_decode(n):\n" + textwrap.indent(block, "    ")
    assert _why(code) == "`use_v1` is always True here (line 5)"


def test_only_one_case_of_a_match_runs() -> None:
    code = _in_function("match n:\n    case 1:\n        use_v1 = False\n    case _:\n        if not use_v1:\n"
                        "            target()\n")
    assert _why(code) == ALWAYS_TRUE


def test_each_function_has_its_own_globals() -> None:
    code = ("def first():\n    global use_v1\n    use_v1 = True\n    if not use_v1:\n        target(1)\n\n"
            "def second():\n    use_v1 = True\n    if not use_v1:\n        target(2)\n")
    source = PythonSource("paged_attn.py", code.encode())
    first, second = source.index.calls("target")
    assert source.reachability.dead(first) is None
    assert source.reachability.dead(second) == "`use_v1` is always True here (line 8)"


def test_a_branch_taken_when_the_test_is_known_true_runs() -> None:
    assert _why("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    target()\n") is None
    assert _why("def f():\n    use_v1 = True\n    if use_v1 and True:\n        target()\n") is None
    assert _why("def f():\n    use_v1 = False\n    if use_v1 or 0:\n        pass\n    else:\n        target()\n") is None


def test_value_of_is_none_for_a_name_bound_inside_another_assignment() -> None:
    code = "def forward_decode(n):\n    limit = (threshold := 32768)\n    run(threshold)\n"
    source = PythonSource("paged_attn.py", code.encode())
    (call,) = source.index.calls("run")
    assert source.reachability.value_of("threshold", call) is None
    assert source.code(source.reachability.value_of("limit", call)) == "threshold := 32768"
