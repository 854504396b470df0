"""Rule keep-pytorch-fallbacks, and the reading of ``class PagedAttention`` it shares (paged_attention.py).

Each ``forward_decode`` is a shape a hurried edit of the shipped
paged_attn.py could take: the threshold test written either way round,
in an ``else``, through a flag, or the PyTorch decode moved under a
``with``/``try``/loop where no threshold leads to it. The whole finding
(line and message) is asserted.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from patcher.checks.base import Valid
from patcher.checks.examples import run_example
from patcher.checks.keep_pytorch_fallbacks import KeepPytorchFallbacks

RULE = KeepPytorchFallbacks()
NOT_ABOVE = ("forward_decode calls _forward_decode_pytorch, but not above the decode threshold "
             "(no `if length > PagedAttention._PYTORCH_DECODE_THRESHOLD:` leads to it)")

HEAD = """\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K

    @staticmethod
    def _forward_prefix_pytorch(query):
        return query

    @staticmethod
    async def _forward_decode_pytorch(query):
        return query

    @staticmethod
    def forward_prefix(query):
        return PagedAttention._forward_prefix_pytorch(query)

    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
"""  # forward_decode's body goes on at line 19
CALL = "PagedAttention._forward_decode_pytorch(query)"


def _found(code: str, params: Mapping[str, Any] | None = None) -> list[tuple[int, str]]:
    found = run_example(RULE, Valid(code, params=dict(params or {})))
    assert all(v.path == "example.py" and v.severity.value == "error" for v in found)
    return [(v.line, v.message) for v in found]


@pytest.mark.parametrize("body", [
    f"        if actual_max >= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD <= actual_max:\n            return {CALL}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD < actual_max:\n            return {CALL}\n",
    f"        if actual_max < PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
    f"        else:\n            return {CALL}\n",
    f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD >= actual_max:\n            return query\n"
    f"        else:\n            return {CALL}\n",
    f"        if not actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        if not actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
    f"        else:\n            return {CALL}\n",
    f"        if query.numel() and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        short = actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD\n        if not short:\n"
    f"            return {CALL}\n",
    f"        if actual_max > _PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        if actual_max > 32768:\n            return {CALL}\n",
    f"        if actual_max > self._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            if query.numel():\n"
    f"                return {CALL}\n",
    f"        if query.numel():\n            if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n"
    f"                return {CALL}\n",
    # A call that cannot run beside one that can: the live one counts.
    f"        if False:\n            return {CALL}\n"
    f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
    f"        return {CALL}\n",
], ids=lambda body: " ".join(body.split())[:70])
def test_the_pytorch_decode_above_the_threshold_passes(body: str) -> None:
    assert _found(HEAD + body) == []


@pytest.mark.parametrize("body, line", [
    (f"        if PagedAttention._PYTORCH_DECODE_THRESHOLD > actual_max:\n            return {CALL}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
     f"        else:\n            return {CALL}\n", 22),
    (f"        if actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD and query.numel():\n"
     f"            return query\n        else:\n            return {CALL}\n", 22),
    (f"        if not actual_max <= PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return query\n"
     f"        else:\n            return {CALL}\n", 22),
    (f"        if actual_max == PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n", 20),
    (f"        if 0 < actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n", 20),
    (f"        if actual_max > PagedAttention.MAX_BATCH:\n            return {CALL}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD_V2:\n            return {CALL}\n", 20),
    (f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD or query.numel():\n"
     f"            return {CALL}\n", 20),
    (f"        with torch.no_grad():\n            return {CALL}\n", 20),
    (f"        for _ in range(1):\n            return {CALL}\n", 20),
    (f"        while True:\n            return {CALL}\n", 20),
    (f"        try:\n            return {CALL}\n        except Exception:\n            raise\n", 20),
    (f"        return {CALL} if query.numel() else query\n", 19),
    (f"        return query.numel() and {CALL}\n", 19),
    (f"        def inner():\n            return {CALL}\n        return inner()\n", 20),
    (f"        if {CALL} is None and actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            pass\n", 19),
    (f"        match actual_max:\n            case 0:\n                return {CALL}\n", 21),
    (f"        if query.numel():\n            return {CALL}\n        return {CALL} if query else None\n", 20),
], ids=lambda body: " ".join(str(body).split())[:70])
def test_the_pytorch_decode_not_led_to_by_the_threshold_is_reported_at_the_first_call(body: str, line: int) -> None:
    assert _found(HEAD + body) == [(line, NOT_ABOVE)]


def test_the_attribute_named_in_the_policy_is_the_threshold() -> None:
    code = HEAD.replace("_PYTORCH_DECODE_THRESHOLD", "_DECODE_LIMIT") + \
        f"        if actual_max > PagedAttention._DECODE_LIMIT:\n            return {CALL}\n"
    assert _found(code, {"threshold-attribute": "_DECODE_LIMIT"}) == []
    assert _found(code) == [(20, NOT_ABOVE)]
    missing = code.replace("    _DECODE_LIMIT: int = 32768  # V1 fails past 32K\n", "")
    assert _found(missing, {"threshold-attribute": "_DECODE_LIMIT"}) == [
        (19, "forward_decode compares with PagedAttention._DECODE_LIMIT, which class PagedAttention does not "
             "define (AttributeError on the first decode)")]
    unguarded = code.replace("if actual_max > PagedAttention._DECODE_LIMIT:", "if query.numel():")
    assert _found(unguarded, {"threshold-attribute": "_DECODE_LIMIT"}) == [
        (20, "forward_decode calls _forward_decode_pytorch, but not above the decode threshold "
             "(no `if length > PagedAttention._DECODE_LIMIT:` leads to it)")]


def test_each_comparison_with_an_undefined_threshold_is_reported_at_its_call() -> None:
    code = HEAD.replace("    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K\n", "    _OTHER = 1\n") + (
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n"
        f"        if actual_max > cls._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n"
        f"        if actual_max > _PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n"
        f"        if actual_max > 65536:\n            return {CALL}\n")
    undefined = "which class PagedAttention does not define (AttributeError on the first decode)"
    assert _found(code) == [
        (20, f"forward_decode compares with PagedAttention._PYTORCH_DECODE_THRESHOLD, {undefined}"),
        (22, f"forward_decode compares with cls._PYTORCH_DECODE_THRESHOLD, {undefined}"),
    ]


def test_a_threshold_set_by_plain_assignment_among_others_is_defined() -> None:
    code = HEAD.replace("    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K\n",
                        "    _PARTITION_SIZE = _PYTORCH_DECODE_THRESHOLD = 32768\n    x.y = 1\n    z: int\n") + \
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n"
    assert _found(code) == []


def test_decode_calls_that_cannot_run_are_reported_with_the_first_ones_reason() -> None:
    body = (f"        use_pytorch = False\n        if use_pytorch:\n            return {CALL}\n"
            f"        if False:\n            return {CALL}\n")
    assert _found(HEAD + body) == [
        (21, "forward_decode calls _forward_decode_pytorch only where it cannot run "
             "(`use_pytorch` is always False here (line 19))")]


def test_a_class_missing_everything_says_each_missing_part_at_the_class() -> None:
    code = "import torch\n\n\nclass PagedAttention:\n    @staticmethod\n    def get_kv_cache_shape(n):\n        return n\n"
    assert _found(code) == [
        (4, "class PagedAttention has no _forward_prefix_pytorch"),
        (4, "class PagedAttention has no _forward_decode_pytorch"),
        (4, "class PagedAttention has no forward_prefix, so nothing calls _forward_prefix_pytorch"),
        (4, "class PagedAttention has no forward_decode, so nothing calls _forward_decode_pytorch"),
    ]


def test_a_prefix_that_never_calls_the_pytorch_prefill_and_one_that_cannot() -> None:
    never = HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                         "        return context_attention_fwd(query)\n") + f"        return {CALL}\n"
    assert _found(never) == [(13, "forward_prefix does not call _forward_prefix_pytorch")]
    dead = HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                        "        use_triton = True\n        if not use_triton:\n"
                        "            return PagedAttention._forward_prefix_pytorch(query)\n"
                        "        return context_attention_fwd(query)\n") + f"        return {CALL}\n"
    assert _found(dead) == [(16, "forward_prefix calls _forward_prefix_pytorch only where it cannot run "
                                 "(`use_triton` is always True here (line 14))")]


def test_a_prefix_with_one_live_call_among_dead_ones_passes() -> None:
    code = HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                        "        if False:\n            return PagedAttention._forward_prefix_pytorch(query)\n"
                        "        return PagedAttention._forward_prefix_pytorch(query)\n") + f"        return {CALL}\n"
    assert _found(code) == []


def test_every_paged_attention_class_is_checked_and_other_classes_are_not() -> None:
    good = HEAD + f"        return {CALL}\n"
    code = ("try:\n    import ixformer\nexcept ImportError:\n    ixformer = None\n\n"
            "class PagedAttentionMetadata:\n    pass\n\n\n"
            + good
            + "\n\nif ixformer is not None:\n"
            + "\n".join(("    " + line) if line else "" for line in
                        good.replace(f"        return {CALL}\n", "        return query\n").splitlines())
            + "\n")
    assert _found(code) == [(48, "forward_decode never calls _forward_decode_pytorch")]


def test_a_documented_class_with_a_helper_that_also_decodes_in_pytorch() -> None:
    # The vendor's class holds a docstring and `pass`-like statements; another method calls the
    # PyTorch decode too: only forward_decode's own calls are judged.
    code = HEAD.replace("class PagedAttention:\n",
                        'class PagedAttention:\n    """Paged attention for BI-V100: PyTorch where the kernels fail."""\n'
                        "    ...\n") + (
        f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n"
        "        return query\n\n"
        "    @staticmethod\n"
        "    def profile(query):\n"
        f"        return {CALL}\n")
    assert _found(code) == []
    unguarded = code.replace(f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
                             f"        return {CALL}\n")
    assert _found(unguarded) == []
    helper_only = code.replace(f"        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:\n            return {CALL}\n",
                               "")
    assert _found(helper_only) == [(19, "forward_decode never calls _forward_decode_pytorch")]
