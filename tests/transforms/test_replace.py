"""``replace`` rewrites each match where it stands, from the last to the first; matches that nest are refused."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.base import StepFailed, parse_pattern
from patcher.transforms.replace import Replace

from tests.fixtures_patches import replace_step


def test_edits_that_grow_one_block_land_where_each_match_was(run_steps) -> None:  # type: ignore[no-untyped-def]
    # Applied from the last to the first, so an earlier edit's new lines do not move a later one.
    steps = replace_step("x += 1", "x += 1\nlog(x)", expect=2)
    source = "def f(x):\n    x += 1\n    y = 2\n    x += 1\n    return x\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "def f(x):\n    x += 1\n    log(x)\n    y = 2\n    x += 1\n    log(x)\n    return x\n"


def test_an_overlapping_run_is_replaced_once(run_steps) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(replace_step("x += 1\nx += 1\n", "x += 2"), "x += 1\nx += 1\nx += 1\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "x += 2\nx += 1\n"


NESTED_IFS = textwrap.dedent('''\
    def forward_decode(query, use_v1, use_fp8):
        if use_v1:
            if use_fp8:  # e4m3
                query = query.float()
            out = v1(query)
            return out
        out = v2(query)
        return out
    ''')


def test_a_replace_whose_matches_nest_is_refused_rather_than_dropping_the_inner_one() -> None:
    # The outer replacement re-emits the body as found: the inner if's
    # rewrite would vanish while the step counted two matches.
    module = cst.parse_module(NESTED_IFS)
    step = Replace(pattern=parse_pattern("pattern", "if $C:\n    $...BODY"),
                   code="if $C:\n    with nvtx.range('branch'):\n        $...BODY", expect=2)
    with pytest.raises(StepFailed, match=r"^'if \$C: / \$\.\.\.BODY' matches inside the code of another of its "
                                         r"matches; one replace cannot rewrite both \(narrow the pattern, or its scope\)$"):
        step.apply(module, "forward_decode")


def test_a_replace_with_side_by_side_matches_rewrites_each() -> None:
    module = cst.parse_module(NESTED_IFS)
    step = Replace(pattern=parse_pattern("pattern", "out = $CALL"), code="out = $CALL.contiguous()", expect=2)
    assert step.apply(module, "forward_decode").code == NESTED_IFS.replace(
        "v1(query)", "v1(query).contiguous()").replace("v2(query)", "v2(query).contiguous()")
