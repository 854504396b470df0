"""A PyTorch fallback counts as kept only where a call of it can run.

keep-pytorch-fallbacks asks ``forward_decode`` to reach
``_forward_decode_pytorch`` above the decode threshold, and
``forward_prefix`` to reach ``_forward_prefix_pytorch``. A call under
``if False:``, after a ``return`` (or ``raise``), under a module flag that
is never true, or inside a nested function that nothing calls is written
but never runs: the rule says so, naming why, as it would with no call.
"""

from __future__ import annotations

import textwrap

import pytest

from patcher.checks import RULES

from tests.fixtures_rules import PAGED_ATTENTION_HEAD, PYTORCH_DECODE, errors_in

RULE = RULES["keep-pytorch-fallbacks"]
ONLY_DEAD = "forward_decode calls _forward_decode_pytorch only where it cannot run"


def decode(body: str, before: str = "") -> str:
    """Return the PagedAttention head with ``forward_decode``'s body going on at line 19 (after ``before``'s lines)."""
    return before + PAGED_ATTENTION_HEAD + textwrap.indent(textwrap.dedent(body), " " * 8)


def first_line_with(code: str, text: str) -> int:
    return next(n for n, line in enumerate(code.splitlines(), 1) if text in line)


# Each entry: a decode body whose only fallback call cannot run, and why.
DEAD_FALLBACKS = {
    "under if False": (f"""\
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            if False:
                return {PYTORCH_DECODE}
        return query
        """, "", "its test `False` is always false"),
    "after a return": (f"""\
        return ixf_f.paged_attention_v2_long(query, seq_lens)
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        """, "", "it comes after the `return` at line 19"),
    "after a raise in the same branch": (f"""\
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            raise NotImplementedError("long contexts")
            return {PYTORCH_DECODE}
        return query
        """, "", "it comes after the `raise` at line 20"),
    "after an if whose branches both return": (f"""\
        if actual_max > 8192:
            return ixf_f.paged_attention_v2_long(query, seq_lens)
        else:
            return query
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        """, "", "it comes after the `return` at line 20"),
    "under a module flag that is never true": (f"""\
        if USE_PYTORCH_DECODE and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        return ixf_f.paged_attention_v2_long(query, seq_lens)
        """, "USE_PYTORCH_DECODE = False\n",
        "`USE_PYTORCH_DECODE` is always False (a module flag set once, at line 1, and never reassigned)"),
    "under a local flag": (f"""\
        long_decode = False
        if long_decode and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        return query
        """, "", "`long_decode` is always False here (line 19)"),
    "in a nested function nothing calls": (f"""\
        def long_context():
            return {PYTORCH_DECODE}
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return ixf_f.paged_attention_v2_long(query, seq_lens)
        return query
        """, "", "`long_context` is defined inside another function that never uses it"),
}


@pytest.mark.parametrize("case", sorted(DEAD_FALLBACKS))
def test_a_fallback_call_that_cannot_run_is_no_fallback(case: str) -> None:
    body, before, why = DEAD_FALLBACKS[case]
    code = decode(body, before)
    assert errors_in(RULE, code) == [(first_line_with(code, PYTORCH_DECODE), f"{ONLY_DEAD} ({why})")]


# Each entry: a decode body whose fallback call can run above the threshold.
LIVE_FALLBACKS = {
    "a return in another branch only": f"""\
        if actual_max <= 8192:
            return query
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        return query
        """,
    "a dead copy beside a live call": f"""\
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
            return {PYTORCH_DECODE}
        return query
        """,
    "a return inside a loop before it": f"""\
        for _ in range(2):
            return query
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        """,
    "a try whose body returns": f"""\
        try:
            return ops.paged_attention_v2(query)
        except NotImplementedError:
            pass
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        return query
        """,
}


@pytest.mark.parametrize("case", sorted(LIVE_FALLBACKS))
def test_a_fallback_call_that_can_run_keeps_the_fallback(case: str) -> None:
    assert errors_in(RULE, decode(LIVE_FALLBACKS[case])) == []


def test_a_module_flag_that_is_true_keeps_the_fallback_and_one_set_again_is_not_trusted() -> None:
    body = f"""\
        if USE_PYTORCH_DECODE and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return {PYTORCH_DECODE}
        return query
        """
    assert errors_in(RULE, decode(body, "USE_PYTORCH_DECODE = True\n")) == []
    # Set again by the module: the flag is unknown, so the call may run and counts.
    assert errors_in(RULE, decode(body, "USE_PYTORCH_DECODE = False\nUSE_PYTORCH_DECODE = probe()\n")) == []


def test_a_nested_function_the_decode_calls_is_reachable() -> None:
    body = f"""\
        def long_context():
            return {PYTORCH_DECODE}
        return long_context()
        """
    assert errors_in(RULE, decode(body)) == [
        (first_line_with(decode(body), PYTORCH_DECODE),
         "forward_decode calls _forward_decode_pytorch, but not above the decode threshold "
         "(no `if length > PagedAttention._PYTORCH_DECODE_THRESHOLD:` leads to it)")]


def test_the_prefix_fallback_after_a_return_is_no_fallback() -> None:
    code = PAGED_ATTENTION_HEAD.replace(
        "        return PagedAttention._forward_prefix_pytorch(query)\n",
        "        return context_attention_fwd(query)\n        return PagedAttention._forward_prefix_pytorch(query)\n",
    ) + f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
    line = first_line_with(code, "return PagedAttention._forward_prefix_pytorch(query)")
    assert errors_in(RULE, code) == [
        (line, f"forward_prefix calls _forward_prefix_pytorch only where it cannot run "
               f"(it comes after the `return` at line {line - 1})")]


def with_helper(helper_body: str, decode_body: str) -> str:
    """Return the PagedAttention head with a helper method ``_decode_long`` and forward_decode's body after it."""
    head = PAGED_ATTENTION_HEAD.replace("    @staticmethod\n    def forward_decode(query, seq_lens):\n",
                                        "    @staticmethod\n    def _decode_long(query):\n"
                                        + textwrap.indent(textwrap.dedent(helper_body), " " * 8)
                                        + "\n    @staticmethod\n    def forward_decode(query, seq_lens):\n")
    return head + textwrap.indent(textwrap.dedent(decode_body), " " * 8)


def test_a_helper_method_the_decode_calls_above_the_threshold_reaches_the_fallback() -> None:
    above = "if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n    return PagedAttention._decode_long(query)\nreturn query\n"
    assert errors_in(RULE, with_helper(f"return {PYTORCH_DECODE}\n", above)) == []
    # The helper's own call must be able to run, and the helper must be called above the threshold.
    code = with_helper(f"return query\nreturn {PYTORCH_DECODE}\n", above)
    assert [message for _, message in errors_in(RULE, code)] == [
        "forward_decode never calls _forward_decode_pytorch"]
    code = with_helper(f"return {PYTORCH_DECODE}\n",
                       "if actual_max < 8192:\n    return PagedAttention._decode_long(query)\nreturn query\n")
    assert [message.split(",")[0] for _, message in errors_in(RULE, code)] == [
        "forward_decode calls _forward_decode_pytorch"]
    # Another object's method of that name is not the helper.
    code = with_helper(f"return {PYTORCH_DECODE}\n",
                       "if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n    return other._decode_long(query)\n"
                       "return query\n")
    assert [message for _, message in errors_in(RULE, code)] == ["forward_decode never calls _forward_decode_pytorch"]


@pytest.mark.parametrize("first, decorator", [("self", ""), ("cls", "    @classmethod\n")])
def test_a_helper_method_called_through_self_or_cls_reaches_the_fallback(first: str, decorator: str) -> None:
    # forward_decode made an instance (or class) method that hands long contexts to a helper of its own.
    code = PAGED_ATTENTION_HEAD.replace(
        "    @staticmethod\n    def forward_decode(query, seq_lens):\n",
        f"{decorator}    def _decode_long({first}, query):\n        return {PYTORCH_DECODE}\n\n"
        f"{decorator}    def forward_decode({first}, query, seq_lens):\n",
    ) + textwrap.indent(f"if actual_max > {first}._PYTORCH_DECODE_THRESHOLD:\n"
                        f"    return {first}._decode_long(query)\n"
                        "return query\n", " " * 8)
    assert errors_in(RULE, code) == []
    unused = code.replace(f"return {first}._decode_long(query)", "return query")
    assert [message for _, message in errors_in(RULE, unused)] == ["forward_decode never calls _forward_decode_pytorch"]
