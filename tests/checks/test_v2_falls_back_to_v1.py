"""Rule v2-needs-fallback: an ``ops.paged_attention_v2`` call that can run needs a ``try`` whose handler reaches
``ops.paged_attention_v1``, in the handler or after it falls through; the message says what is missing.

A V2 call that cannot run is a note that says why, and a fallback that
cannot run is no fallback.
"""

from __future__ import annotations

import pytest

from patcher.checks.base import PythonSource
from patcher.checks.examples import example_settings
from patcher.checks.v2_needs_fallback import V2NeedsFallback

RULE = V2NeedsFallback()
V2 = "ops.paged_attention_v2(output, query)"
V1 = "ops.paged_attention_v1(output, query)"


def _found(code: str) -> list[tuple[str, int, str]]:
    source = PythonSource("qwen3_6_scripts/paged_attn.py", code.replace("V2", V2).replace("V1", V1).encode())
    return [(v.severity.value, v.line, v.message) for v in RULE.check_file(source, example_settings(RULE))]


@pytest.mark.parametrize("code", [
    # The fallback right after the try, first thing in the function.
    "def forward_decode():\n    try:\n        V2\n    except NotImplementedError:\n        log('no V2')\n    V1\n",
    # At module level (a script), the same.
    "try:\n    V2\nexcept NotImplementedError:\n    pass\nV1\n",
    # The try sits in an else block; the fallback follows it there.
    "def forward_decode(short):\n    if short:\n        V1\n    else:\n        try:\n            V2\n"
    "        except RuntimeError:\n            pass\n        V1\n",
    # The try sits in the finally of another; the fallback follows it there.
    "def forward_decode():\n    try:\n        prepare()\n    finally:\n        try:\n            V2\n"
    "        except Exception:\n            pass\n        V1\n",
    # A bare except, and exception names spelled through a module.
    "def forward_decode():\n    try:\n        V2\n    except:\n        V1\n",
    "def forward_decode():\n    try:\n        V2\n    except builtins.NotImplementedError:\n        V1\n",
    "def forward_decode():\n    try:\n        V2\n    except (ValueError, errors.BaseException):\n        V1\n",
])
def test_a_v2_call_with_a_way_back_to_v1_passes(code: str) -> None:
    assert _found(code) == []


def test_a_v1_call_inside_the_try_body_is_no_fallback() -> None:
    code = "def forward_decode():\n    try:\n        V2\n        V1\n    except NotImplementedError:\n        pass\n"
    assert _found(code) == [("error", 3, "ops.paged_attention_v2(...) sits in a try, but the handler at line 5 "
                                         "falls through, but no ops.paged_attention_v1 call follows the try")]


def test_a_v1_call_before_the_try_is_no_fallback() -> None:
    code = "def forward_decode():\n    V1\n    try:\n        V2\n    except NotImplementedError:\n        pass\n"
    assert [f[:2] for f in _found(code)] == [("error", 4)]


def test_a_module_level_try_without_a_fallback_after_it_is_found() -> None:
    code = "try:\n    V2\nexcept NotImplementedError:\n    pass\n"
    assert _found(code) == [("error", 2, "ops.paged_attention_v2(...) sits in a try, but the handler at line 3 "
                                         "falls through, but no ops.paged_attention_v1 call follows the try")]


@pytest.mark.parametrize("handlers, caught", [
    ("    except ValueError:\n        V1\n    except KeyError:\n        V1\n", "ValueError, KeyError"),
    ("    except (ValueError, KeyError):\n        V1\n", "(ValueError, KeyError)"),
    ("    finally:\n        V1\n", "nothing"),
])
def test_a_try_that_cannot_catch_the_missing_kernel_says_what_it_catches(handlers: str, caught: str) -> None:
    code = "def forward_decode():\n    try:\n        V2\n" + handlers
    assert _found(code) == [("error", 3, f"ops.paged_attention_v2(...) sits in a try (line 2) that catches only "
                                         f"{caught}, not NotImplementedError")]


@pytest.mark.parametrize("leave, how", [("break", "breaks out"), ("continue", "continues the loop")])
def test_a_handler_that_leaves_the_loop_never_reaches_v1(leave: str, how: str) -> None:
    code = (f"def forward_decode(batches):\n    for batch in batches:\n        try:\n            V2\n"
            f"        except NotImplementedError:\n            {leave}\n        V1\n")
    assert _found(code) == [("error", 4, f"ops.paged_attention_v2(...) sits in a try, but the handler at line 5 "
                                         f"{how} before reaching ops.paged_attention_v1")]


def test_the_innermost_try_says_why_when_none_falls_back() -> None:
    code = ("def forward_decode():\n    try:\n        try:\n            V2\n        except ValueError:\n"
            "            pass\n    except NotImplementedError:\n        raise\n")
    assert _found(code) == [("error", 4, "ops.paged_attention_v2(...) sits in a try (line 3) that catches only "
                                         "ValueError, not NotImplementedError")]


def test_a_v2_call_reached_through_another_expression_is_named_by_its_kernel() -> None:
    code = "def forward_decode():\n    get_ops().paged_attention_v2(output, query)\n"
    assert _found(code) == [("error", 2, "paged_attention_v2(...) is called outside any try, "
                                         "so nothing falls back to ops.paged_attention_v1")]


def test_a_dead_v2_call_is_a_note_that_says_why() -> None:
    code = "def f():\n    use_v1 = True\n    if use_v1:\n        ops.paged_attention_v1(o)\n    else:\n" \
           "        ops.paged_attention_v2(o)\n"
    rule = V2NeedsFallback()
    found = list(rule.check_file(PythonSource("t.py", code.encode()), example_settings(rule)))
    assert [(v.severity.value, v.line, v.message) for v in found] == [
        ("note", 6, "ops.paged_attention_v2 at line 6 cannot run: `use_v1` is always True here (line 2)")]


def test_a_v2_call_that_cannot_run_does_not_hide_the_ones_after_it() -> None:
    code = ("def forward_decode(n):\n    if False:\n        V2\n    ops.paged_attention_v2(output, n)\n")
    assert [f[:2] for f in _found(code)] == [("note", 3), ("error", 4)]


def test_a_fallback_that_cannot_run_is_no_fallback() -> None:
    code = ("def f():\n    try:\n        ops.paged_attention_v2(o)\n    except NotImplementedError:\n"
            "        if False:\n            ops.paged_attention_v1(o)\n")
    rule = V2NeedsFallback()
    found = list(rule.check_file(PythonSource("t.py", code.encode()), example_settings(rule)))
    assert [(v.severity.value, v.line) for v in found] == [("error", 3)]
    assert "falls through, but no ops.paged_attention_v1 call follows" in found[0].message


@pytest.mark.parametrize("code, line, name", [
    ("from vllm._custom_ops import paged_attention_v2 as _v2\ndef forward_decode():\n    _v2(output, query)\n",
     3, "_v2"),
    ("def forward_decode():\n    getattr(ops, 'paged_attention_v2')(output, query)\n",
     2, "getattr(ops, 'paged_attention_v2')"),
])
def test_a_v2_kernel_called_under_another_name_needs_a_fallback_too(code: str, line: int, name: str) -> None:
    assert _found(code) == [("error", line, f"{name}(...) is called outside any try, "
                                            "so nothing falls back to ops.paged_attention_v1")]


def test_a_v2_kernel_handed_on_as_a_value_is_a_warning_that_its_call_is_not_checked() -> None:
    code = ("def forward_decode(long):\n    kernel = ops.paged_attention_v2 if long else ops.paged_attention_v1\n"
            "    kernel(output, query)\n")
    assert _found(code) == [("warning", 2, "ops.paged_attention_v2 is handed on as a value "
                                           "(`ops.paged_attention_v2`), so the call it leads to cannot be checked "
                                           "for a fallback to ops.paged_attention_v1; call it where a try falls "
                                           "back to V1")]


@pytest.mark.parametrize("code", [
    "def forward_decode(long):\n    try:\n        kernel = ops.paged_attention_v2 if long else ops.paged_attention_v1\n"
    "        kernel(output, query)\n    except NotImplementedError:\n        V1\n",
    "def forward_decode():\n    if False:\n        kernel = ops.paged_attention_v2\n",
    "print(hasattr(ops, 'paged_attention_v2'))\n",
])
def test_a_v2_kernel_handed_on_inside_a_try_that_falls_back_or_in_dead_code_or_only_named_is_fine(code: str) -> None:
    assert _found(code) == []


@pytest.mark.parametrize(("code", "line"), [
    ("def forward_decode():\n    try:\n        def run():\n            V2\n    except RuntimeError:\n        V1\n"
     "    run()\n", 4),
    ("try:\n    class Decoder:\n        def run(self):\n            V2\nexcept RuntimeError:\n    V1\n", 4),
    ("def forward_decode():\n    try:\n        run = lambda: V2\n    except RuntimeError:\n        V1\n    run()\n", 3),
])
def test_a_try_around_a_definition_does_not_protect_the_v2_call_inside_it(code: str, line: int) -> None:
    # The try runs the 'def', not the call: the function runs later, outside it.
    assert _found(code) == [("error", line, "ops.paged_attention_v2(...) is called outside any try, so nothing "
                                            "falls back to ops.paged_attention_v1")]
