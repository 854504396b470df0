"""A flag read in a class body defined inside a function is never trusted to make a branch dead.

A class body that binds the name anywhere looks it up in the class namespace and then the module,
never in the enclosing function, so the function's literal above it says nothing about the branch.
"""

from __future__ import annotations

import textwrap

from patcher.checks.base import PythonSource


# A factory that builds the attention class; the flag is set in the function, read in the class body.
FACTORY = """\
def make_paged_attention(block_size):
    use_v1 = True
    class PagedAttentionImpl:
        # V2 splits long contexts into partitions; V1 fails for long contexts
        if not use_v1:
            target()
        {later}
    return PagedAttentionImpl
"""


def _dead(code: str) -> str | None:
    """Why the one call of ``target()`` in ``code`` cannot run, or None."""
    source = PythonSource("paged_attn.py", textwrap.dedent(code).encode())
    (call,) = source.index.calls("target")
    return source.reachability.dead(call)


def test_a_flag_read_in_a_class_body_inside_a_function_is_not_trusted() -> None:
    # In a function body the flag decides the branch.
    plain = "def make_paged_attention(block_size):\n    use_v1 = True\n    if not use_v1:\n        target()\n"
    assert _dead(plain) == "`use_v1` is always True here (line 2)"
    # In a class body names are never trusted, even with the function's literal just above.
    assert _dead(FACTORY.format(later="pass")) is None
    assert _dead(FACTORY.format(later="use_v1 = block_size > 16")) is None


def test_a_class_body_that_rebinds_the_flag_later_reads_another_one() -> None:
    # Why the branch is live: a class body binding `use_v1` anywhere looks the name up in the
    # class namespace and then the module, never in the function, so `if not use_v1` runs target().
    code = FACTORY.format(later="use_v1 = block_size > 16")
    calls: list[str] = []
    namespace = {"use_v1": False, "target": lambda: calls.append("v2")}
    exec(compile(code, "paged_attn.py", "exec"), namespace)
    namespace["make_paged_attention"](16)  # type: ignore[operator]
    assert calls == ["v2"]
    assert _dead(code) is None
