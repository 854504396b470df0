"""Rule keep-pytorch-fallbacks on the class: every ``PagedAttention`` keeps ``_forward_prefix_pytorch`` and
``_forward_decode_pytorch``, and ``forward_prefix``/``forward_decode`` call them where the call can run.

Each missing part is named at the class; a call that cannot run says why.
Classes of other names are not judged.
"""

from __future__ import annotations

from patcher.checks.keep_pytorch_fallbacks import KeepPytorchFallbacks

from tests.fixtures_rules import PAGED_ATTENTION_HEAD, PYTORCH_DECODE, errors_in

RULE = KeepPytorchFallbacks()


def test_a_class_missing_everything_says_each_missing_part_at_the_class() -> None:
    code = "import torch\n\n\nclass PagedAttention:\n    @staticmethod\n    def get_kv_cache_shape(n):\n        return n\n"
    assert errors_in(RULE, code) == [
        (4, "class PagedAttention has no _forward_prefix_pytorch"),
        (4, "class PagedAttention has no _forward_decode_pytorch"),
        (4, "class PagedAttention has no forward_prefix, so nothing calls _forward_prefix_pytorch"),
        (4, "class PagedAttention has no forward_decode, so nothing calls _forward_decode_pytorch"),
    ]


def test_a_prefix_that_never_calls_the_pytorch_prefill_or_only_where_it_cannot_run_is_reported() -> None:
    never = PAGED_ATTENTION_HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                         "        return context_attention_fwd(query)\n") + f"        return {PYTORCH_DECODE}\n"
    assert errors_in(RULE, never) == [(13, "forward_prefix does not call _forward_prefix_pytorch")]
    dead = PAGED_ATTENTION_HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                        "        use_triton = True\n        if not use_triton:\n"
                        "            return PagedAttention._forward_prefix_pytorch(query)\n"
                        "        return context_attention_fwd(query)\n") + f"        return {PYTORCH_DECODE}\n"
    assert errors_in(RULE, dead) == [(16, "forward_prefix calls _forward_prefix_pytorch only where it cannot run "
                                 "(`use_triton` is always True here (line 14))")]


def test_a_prefix_with_one_live_call_among_dead_ones_passes() -> None:
    code = PAGED_ATTENTION_HEAD.replace("        return PagedAttention._forward_prefix_pytorch(query)\n",
                        "        if False:\n            return PagedAttention._forward_prefix_pytorch(query)\n"
                        "        return PagedAttention._forward_prefix_pytorch(query)\n") + f"        return {PYTORCH_DECODE}\n"
    assert errors_in(RULE, code) == []


def test_every_paged_attention_class_is_checked_and_other_classes_are_not() -> None:
    good = PAGED_ATTENTION_HEAD + f"        return {PYTORCH_DECODE}\n"
    code = ("try:\n    import ixformer\nexcept ImportError:\n    ixformer = None\n\n"
            "class PagedAttentionMetadata:\n    pass\n\n\n"
            + good
            + "\n\nif ixformer is not None:\n"
            + "\n".join(("    " + line) if line else "" for line in
                        good.replace(f"        return {PYTORCH_DECODE}\n", "        return query\n").splitlines())
            + "\n")
    assert errors_in(RULE, code) == [(48, "forward_decode never calls _forward_decode_pytorch")]
