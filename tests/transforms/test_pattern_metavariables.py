"""A metavariable binds the code it matched; bound twice, both places must hold the same code.

``$X`` takes one expression, ``$...X`` a run of arguments or list
elements, ``$_`` and ``$...`` take code without binding it. A match binds
only the names the pattern gives.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.pattern import Pattern, decode_metavariables, find_statements

from tests.fixtures_patches import replace_step
from tests.transforms.conftest import code_of


def test_single_metavariable_binds_and_must_repeat_consistently() -> None:
    module = cst.parse_module("y = max(m, m)\nz = max(m, n)\n")
    found = find_statements(Pattern.parse("$OUT = max($A, $A)"), module)
    assert [code_of(module, f.bindings["OUT"]) for f in found] == ["y"]


def test_sequence_metavariable_takes_any_run_of_arguments() -> None:
    module = cst.parse_module("ops.v1(out, q, k, v, scale=s)\n")
    found = find_statements(Pattern.parse("ops.v1(out, $...REST)"), module)
    assert code_of(module, found[0].bindings["REST"]) == "q, k, v, scale=s"


def test_a_list_sequence_takes_the_elements(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("_SUPPORTED_HEAD_SIZES = [$...SIZES]", "_SUPPORTED_HEAD_SIZES = [$...SIZES, 256]")
    source = "_SUPPORTED_HEAD_SIZES = [64, 80, 96, 112, 128]  # of the card\n"
    patched, outcome = run_steps(steps, source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "_SUPPORTED_HEAD_SIZES = [64, 80, 96, 112, 128, 256]  # of the card\n"


def test_a_list_element_metavariable_binds_the_value() -> None:
    module = cst.parse_module("sizes = [64, 80, 96]\n")
    (run,) = find_statements(Pattern.parse("sizes = [$FIRST, $...REST]"), module)
    assert isinstance(run.bindings["FIRST"], cst.Integer)
    assert code_of(module, run.bindings["REST"]) == "80, 96"


# A run metavariable used twice must match the same run: same length, same items, same order.
@pytest.mark.parametrize(("code", "matches"), [
    ("f(1, 2)\ng(1, 2)\n", True),
    ("f()\ng()\n", True),
    ("f(1, 2)\ng(1, 3)\n", False),
    ("f(1, 2)\ng(2, 1)\n", False),
    ("f(1, 2)\ng(1)\n", False),
    ("f(1)\ng(1, 2)\n", False),
])
def test_a_run_metavariable_used_twice_must_repeat_exactly(code: str, matches: bool) -> None:
    pattern = Pattern.parse("f($...A)\ng($...A)")
    assert bool(find_statements(pattern, cst.parse_module(code))) is matches


def test_a_run_bound_first_never_equals_a_single_expression_later() -> None:
    module = cst.parse_module("validate(query, key_cache)\nout = decode(query)\n")
    assert find_statements(Pattern.parse("validate($...ARGS)\nout = decode($ARGS)"), module) == []
    assert len(find_statements(Pattern.parse("validate($Q, $...)\nout = decode($Q)"), module)) == 1


@pytest.mark.parametrize(("pattern", "names"), [
    ("out = decode($...ARGS)", {"ARGS", "ARGS:layout"}),
    ("out = decode($...)", set()),
    ("out = decode($_)", set()),
    ("out = decode(query)", set()),
    ("out = decode(query, $...REST)", {"REST"}),
])
def test_a_match_binds_only_what_the_pattern_names(pattern: str, names: set[str]) -> None:
    module = cst.parse_module("out = decode(query)\n")
    (run,) = find_statements(Pattern.parse(pattern), module)
    assert set(run.bindings) == names


def test_metavariables_read_back_for_messages() -> None:
    assert str(Pattern.parse("f($X,\n  $...REST)")) == "f($X, / $...REST)"
    assert decode_metavariables("f(__pv_X__, __pvs_REST__, __pvs____)") == "f($X, $...REST, $...)"
