"""What a pattern captured is spliced into the step's code whole: statements, argument runs and their layout.

A captured statement comes back as it was written (comment included); a
captured run of arguments keeps its separators and line breaks, the first
capture's where a run is captured twice. Code that uses a metavariable its
pattern does not capture fails the step, naming the key.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.base import ConfigError
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern
from patcher.transforms.replace import Replace

from tests.fixtures_patches import replace_step, step


@pytest.mark.parametrize(("steps", "source", "scope", "patched"), [
    pytest.param(replace_step("$DECODE\nreturn output\n", "$DECODE\ntorch.cuda.synchronize()\nreturn output\n"),
                 "def f(q, use_v1):\n    if use_v1:\n        output = v1(q)\n    else:\n        output = v2(q)\n"
                 "    return output\n",
                 "f",
                 "def f(q, use_v1):\n    if use_v1:\n        output = v1(q)\n    else:\n        output = v2(q)\n"
                 "    torch.cuda.synchronize()\n    return output\n",
                 id="a-captured-statement-comes-back-whole"),
    pytest.param(replace_step("ops.paged_attention_v1(output, $...REST)", "output = _decode_pytorch($...REST)"),
                 "def f(output, q, k):\n    ops.paged_attention_v1(output, q, k, scale=0.5)  # vendor kernel\n",
                 "f",
                 "def f(output, q, k):\n    output = _decode_pytorch(q, k, scale=0.5)  # vendor kernel\n",
                 id="arguments-captured-after-a-fixed-one-fill-another-call"),
    pytest.param(replace_step("y = g($...ARGS)", "y = h($...ARGS, extra)"), "y = g(a, b)\n", "",
                 "y = h(a, b, extra)\n",
                 id="spliced-arguments-are-separated-as-written"),
    # The vendor wrote one argument a line: the rewritten call keeps that layout.
    pytest.param(replace_step("y = g($...ARGS)", "y = h($...ARGS)"), "y = g(\n    a,\n    b,\n)\n", "",
                 "y = h(\n    a,\n    b,\n)\n",
                 id="spliced-arguments-keep-their-line-breaks"),
    pytest.param(replace_step("validate_inputs($...ARGS)\nout = decode($...ARGS)\n", "out = decode_v2($...ARGS)"),
                 "def f(query, key_cache):\n    validate_inputs(\n        query, key_cache)\n    out = decode(query, key_cache)\n",
                 "f",
                 "def f(query, key_cache):\n    out = decode_v2(\n        query, key_cache)\n",
                 id="a-run-captured-twice-is-rebuilt-with-its-first-layout"),
])
def test_a_capture_is_spliced_back_as_it_was_written(  # type: ignore[no-untyped-def]
        apply_steps, steps: str, source: str, scope: str, patched: str) -> None:
    assert apply_steps(steps, source, scope) == patched


@pytest.mark.parametrize("step", [
    Replace(pattern=Pattern.parse("use_v1 = $COND"), code="use_v1 = $LIMIT"),
    Insert(anchor=Pattern.parse("use_v1 = $COND"), position="after", code="assert $LIMIT"),
    Insert(anchor=Pattern.parse("use_v1 = $COND"), position="before", code="assert $LIMIT"),
], ids=["replace", "insert-after", "insert-before"])
def test_code_using_an_uncaptured_metavariable_names_the_code_key(step) -> None:  # type: ignore[no-untyped-def]
    module = cst.parse_module("use_v1 = max_seq_len <= 8192\n")
    with pytest.raises(ConfigError) as raised:
        step.apply(module, "")
    assert raised.value.key == "code"
    assert str(raised.value).startswith("the code uses $LIMIT, which the ")


@pytest.mark.parametrize(("op", "what"), [("replace", "pattern"), ("insert", "anchor")])
def test_code_using_a_metavariable_not_captured_fails_the_step(run_steps, op: str, what: str) -> None:  # type: ignore[no-untyped-def]
    key = "pattern" if op == "replace" else "before"
    patched, outcome = run_steps(step(op, **{key: "x = $A"}, code="y = $B"), "x = 1\n")
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith(f"step 1 ({op}): the code uses $B, which the {what} does not capture")
    assert patched == "x = 1\n"
