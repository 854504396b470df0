"""Rule keep-pytorch-fallbacks on decode: ``forward_decode`` reaches ``_forward_decode_pytorch`` above the decode threshold.

Each ``forward_decode`` is a shape a hurried edit of the shipped
paged_attn.py could take: the threshold test written either way round, in
an ``else``, through a flag, or the PyTorch decode moved under a
``with``/``try``/loop where no threshold leads to it. The threshold is the
class attribute the policy names, and the class must define it.
"""

from __future__ import annotations

import pytest

from patcher.checks.keep_pytorch_fallbacks import KeepPytorchFallbacks

from tests.fixtures_rules import PAGED_ATTENTION_HEAD, PYTORCH_DECODE, errors_in

RULE = KeepPytorchFallbacks()
NOT_ABOVE = ("forward_decode calls _forward_decode_pytorch, but not above the decode threshold "
             "(no `if length > PagedAttention._PYTORCH_DECODE_THRESHOLD:` leads to it)")


@pytest.mark.parametrize("body", [
    f"        if actual_max >= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD <= actual_max:\n            return {PYTORCH_DECODE}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD < actual_max:\n            return {PYTORCH_DECODE}\n",
    f"        if actual_max < PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
    f"        else:\n            return {PYTORCH_DECODE}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD >= actual_max:\n            return query\n"
    f"        else:\n            return {PYTORCH_DECODE}\n",
    f"        if not actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        if not actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
    f"        else:\n            return {PYTORCH_DECODE}\n",
    f"        if query.numel() and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        short = actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD\n        if not short:\n"
    f"            return {PYTORCH_DECODE}\n",
    f"        if actual_max > _PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        if actual_max > 32768:\n            return {PYTORCH_DECODE}\n",
    f"        if actual_max > self._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            if query.numel():\n"
    f"                return {PYTORCH_DECODE}\n",
    f"        if query.numel():\n            if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n"
    f"                return {PYTORCH_DECODE}\n",
    # A call that cannot run beside one that can: the live one counts.
    f"        if False:\n            return {PYTORCH_DECODE}\n"
    f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
    f"        return {PYTORCH_DECODE}\n",
], ids=lambda body: " ".join(body.split())[:70])
def test_the_pytorch_decode_above_the_threshold_passes(body: str) -> None:
    assert errors_in(RULE, PAGED_ATTENTION_HEAD + body) == []


@pytest.mark.parametrize("body, line", [
    (f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD > actual_max:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
     f"        else:\n            return {PYTORCH_DECODE}\n", 22),
    (f"        if actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD and query.numel():\n"
     f"            return query\n        else:\n            return {PYTORCH_DECODE}\n", 22),
    (f"        if not actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
     f"        else:\n            return {PYTORCH_DECODE}\n", 22),
    (f"        if actual_max == PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        if 0 < actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        if actual_max > PagedAttention.MAX_BATCH:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD_V2:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD or query.numel():\n"
     f"            return {PYTORCH_DECODE}\n", 20),
    (f"        with torch.no_grad():\n            return {PYTORCH_DECODE}\n", 20),
    (f"        for _ in range(1):\n            return {PYTORCH_DECODE}\n", 20),
    (f"        while True:\n            return {PYTORCH_DECODE}\n", 20),
    (f"        try:\n            return {PYTORCH_DECODE}\n        except Exception:\n            raise\n", 20),
    (f"        return {PYTORCH_DECODE} if query.numel() else query\n", 19),
    (f"        return query.numel() and {PYTORCH_DECODE}\n", 19),
    (f"        def inner():\n            return {PYTORCH_DECODE}\n        return inner()\n", 20),
    (f"        if {PYTORCH_DECODE} is None and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            pass\n", 19),
    (f"        match actual_max:\n            case 0:\n                return {PYTORCH_DECODE}\n", 21),
    (f"        if query.numel():\n            return {PYTORCH_DECODE}\n        return {PYTORCH_DECODE} if query else None\n", 20),
], ids=lambda body: " ".join(str(body).split())[:70])
def test_the_pytorch_decode_not_led_to_by_the_threshold_is_reported_at_the_first_call(body: str, line: int) -> None:
    assert errors_in(RULE, PAGED_ATTENTION_HEAD + body) == [(line, NOT_ABOVE)]


def test_decode_calls_that_cannot_run_are_reported_with_the_first_ones_reason() -> None:
    body = (f"        use_pytorch = False\n        if use_pytorch:\n            return {PYTORCH_DECODE}\n"
            f"        if False:\n            return {PYTORCH_DECODE}\n")
    assert errors_in(RULE, PAGED_ATTENTION_HEAD + body) == [
        (21, "forward_decode calls _forward_decode_pytorch only where it cannot run "
             "(`use_pytorch` is always False here (line 19))")]


def test_the_attribute_named_in_the_policy_is_the_threshold() -> None:
    code = PAGED_ATTENTION_HEAD.replace("_PYTORCH_DECODE_THRESHOLD", "_DECODE_LIMIT") + \
        f"        if actual_max > PagedAttention._DECODE_LIMIT:\n            return {PYTORCH_DECODE}\n"
    assert errors_in(RULE, code, {"threshold-attribute": "_DECODE_LIMIT"}) == []
    assert errors_in(RULE, code) == [(20, NOT_ABOVE)]
    missing = code.replace("    _DECODE_LIMIT: int = 32768  # V1 fails past 32K\n", "")
    assert errors_in(RULE, missing, {"threshold-attribute": "_DECODE_LIMIT"}) == [
        (19, "forward_decode compares with PagedAttention._DECODE_LIMIT, which class PagedAttention does not "
             "define (AttributeError on the first decode)")]
    unguarded = code.replace("if actual_max > PagedAttention._DECODE_LIMIT:", "if query.numel():")
    assert errors_in(RULE, unguarded, {"threshold-attribute": "_DECODE_LIMIT"}) == [
        (20, "forward_decode calls _forward_decode_pytorch, but not above the decode threshold "
             "(no `if length > PagedAttention._DECODE_LIMIT:` leads to it)")]


def test_each_comparison_with_an_undefined_threshold_is_reported_at_its_call() -> None:
    code = PAGED_ATTENTION_HEAD.replace("    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K\n", "    _OTHER = 1\n") + (
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
        f"        if actual_max > cls._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
        f"        if actual_max > _PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
        f"        if actual_max > 65536:\n            return {PYTORCH_DECODE}\n")
    undefined = "which class PagedAttention does not define (AttributeError on the first decode)"
    assert errors_in(RULE, code) == [
        (20, f"forward_decode compares with PagedAttention._PYTORCH_DECODE_THRESHOLD, {undefined}"),
        (22, f"forward_decode compares with cls._PYTORCH_DECODE_THRESHOLD, {undefined}"),
    ]


def test_a_threshold_set_by_plain_assignment_among_others_is_defined() -> None:
    code = PAGED_ATTENTION_HEAD.replace("    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K\n",
                        "    _PARTITION_SIZE = _PYTORCH_DECODE_THRESHOLD = 32768\n    x.y = 1\n    z: int\n") + \
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
    assert errors_in(RULE, code) == []


def test_only_forward_decodes_own_calls_of_the_pytorch_decode_are_judged() -> None:
    # The vendor's class holds a docstring and `pass`-like statements; another method calls the
    # PyTorch decode too: only forward_decode's own calls are judged.
    code = PAGED_ATTENTION_HEAD.replace("class PagedAttention:\n",
                        'class PagedAttention:\n    """Paged attention for BI-V100: PyTorch where the kernels fail."""\n'
                        "    ...\n") + (
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n"
        "        return query\n\n"
        "    @staticmethod\n"
        "    def profile(query):\n"
        f"        return {PYTORCH_DECODE}\n")
    assert errors_in(RULE, code) == []
    unguarded = code.replace(f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
                             f"        return {PYTORCH_DECODE}\n")
    assert errors_in(RULE, unguarded) == []
    helper_only = code.replace(f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {PYTORCH_DECODE}\n",
                               "")
    assert errors_in(RULE, helper_only) == [(19, "forward_decode never calls _forward_decode_pytorch")]
