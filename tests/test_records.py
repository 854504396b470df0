"""What a run records about its patches (patcher/records.py): read back as written, and worded for the error line.

The patch cache and the manifest store these records as JSON and ``upgrade``
reads them back from both, so a record must come back from JSON text equal
to what was written, whatever optional field it holds or lacks.
"""

from __future__ import annotations

import json

import pytest

from patcher.records import Closest, Diagnostic, MatchPrint, Print, StepPrint

CLOSEST = Closest(first_line=12, last_line=14, statement=2, pattern="out = torch.empty_like(q)",
                  code="out = torch.zeros_like(q)", matched=1, differing_tokens=3, inside="else, statement 2")


def through_json(data: dict) -> dict:
    """DATA as the cache and the manifest hand it back: written as JSON text and read again."""
    return json.loads(json.dumps(data))


@pytest.mark.parametrize("closest", [
    CLOSEST,
    Closest(7, 7, 1, "", "return out", 0, 0),  # no inside, the code goes on where the pattern ended
])
def test_a_closest_run_reads_back_equal_from_json(closest: Closest) -> None:
    assert Closest.from_json(through_json(closest.to_json())) == closest


@pytest.mark.parametrize("diagnostic", [
    Diagnostic("step", "PagedAttention.forward_decode", "ops.paged_attention_v1(...)", 2, CLOSEST),
    Diagnostic("scope", "PagedAttention.forward_prefix", scopes=("PagedAttention.forward_prefill", "forward")),
    Diagnostic("requires", "PagedAttention", "import triton"),
])
def test_a_diagnostic_reads_back_equal_from_json(diagnostic: Diagnostic) -> None:
    data = through_json(diagnostic.to_json())
    assert Diagnostic.from_json(data) == diagnostic
    assert data["text"] == diagnostic.describe()  # the wording travels with the record


def test_a_diagnostic_record_without_its_optional_fields_reads_back_with_their_defaults() -> None:
    assert Diagnostic.from_json({"kind": "scope", "scope": "forward"}) == Diagnostic("scope", "forward", "", None,
                                                                                   None, ())


def test_match_and_step_prints_read_back_equal_from_json() -> None:
    match = MatchPrint(Print("ab12", "x = f(y)"), {"value": Print("cd34", "f(y)"), "name": Print("ef56", "x")})
    step = StepPrint(3, (match, MatchPrint(Print("0000", "pass"), {})))
    assert StepPrint.from_json(through_json(step.to_json())) == step
    assert list(match.to_json()["bindings"]) == ["name", "value"]  # sorted: the same match writes the same bytes


@pytest.mark.parametrize(("closest", "text"), [
    (CLOSEST, "closest: lines 12-14, statement 2 differs (else, statement 2): "
              "pattern 'out = torch.empty_like(q)', code 'out = torch.zeros_like(q)'"),
    (Closest(9, 9, 3, "return out", "", 2, 1),
     "closest: line 9, statement 3 differs: pattern 'return out', the block ends there"),
    (Closest(9, 10, 3, "", "out.mul_(scale)", 2, 1),
     "closest: lines 9-10, statement 3 differs: the code goes on with 'out.mul_(scale)'"),
])
def test_a_closest_run_says_where_code_and_pattern_part(closest: Closest, text: str) -> None:
    assert closest.describe() == text


@pytest.mark.parametrize(("diagnostic", "text"), [
    (Diagnostic("scope", "forward_prefix", scopes=("forward_prefill", "forward")),
     "scopes with close names: forward_prefill, forward"),
    (Diagnostic("scope", "forward_prefix"), "no class or function has a close name"),
    (Diagnostic("step", "forward", "import triton", 1), "nothing in the scope resembles it"),
    (Diagnostic("step", "forward", "out = torch.empty_like(q)", 2, CLOSEST), CLOSEST.describe()),
])
def test_a_diagnostic_says_where_the_code_came_closest_or_that_nothing_did(diagnostic: Diagnostic,
                                                                          text: str) -> None:
    assert diagnostic.describe() == text
