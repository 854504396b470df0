"""A patch that does not apply fails with one message: what failed, where, and the closest code at the lines as read.

A missing requirement or scope names itself and what comes close; a step
that finds nothing names the closest code by its line in the file as read,
even after earlier steps or patches moved it; a pattern found too often, or
a step without a pattern, has no closest code to show.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst
import pytest

from patcher.patchset.model import PatchCode
from patcher.patchset.runner import Status, patch_source
from patcher.transforms.base import Operation, StepFailed

from tests.fixtures_patches import patch_toml, replace_step
from tests.patchset.conftest import SOURCE, run_one, run_series


def test_a_missing_requirement_names_it_and_the_closest_code(load_patch: Any) -> None:
    result, outcome = run_one(load_patch, patch_toml("edit", replace_step("y = 2", "y = 3"), header='requires = ["z = 9"]'))
    assert outcome.status is Status.FAILED
    assert outcome.detail == "needs 'z = 9' in f, which is not there"
    assert outcome.message == (
        "needs 'z = 9' in f, which is not there;"
        " closest: line 2, statement 1 differs: pattern 'z = 9', code 'x = 1'"
    )
    assert outcome.diagnostic is not None
    assert (outcome.diagnostic.kind, outcome.diagnostic.scope, outcome.diagnostic.pattern) == ("requires", "f", "z = 9")
    assert outcome.patch.id == "edit"
    assert result.patched == SOURCE


# An earlier patch that adds a line above 'x = 1', moving the lines below it down.
LEAD_TEXT = ("lead", replace_step("x = 1", "x = 1\nw = 0"))


def test_a_missing_requirement_after_an_earlier_patch_names_lines_as_read(load_patch: Any) -> None:
    lead = load_patch(patch_toml(*LEAD_TEXT))
    needs = load_patch(patch_toml("needs", replace_step("y = 2", "y = 3"), header='requires = ["y = 5"]'))
    result = patch_source("x.py", SOURCE, [lead, needs])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.FAILED]
    assert result.outcomes[1].message == (
        "needs 'y = 5' in f, which is not there; closest: line 3, statement 1 differs: pattern 'y = 5', code 'y = 2'"
    )


def test_a_step_failing_where_the_main_marker_holds_says_the_patch_may_be_there(load_patch: Any) -> None:
    # The first marker holds, the second does not: the file has the patch
    # with other parameters (or edited by hand), and the step finds nothing.
    header = 'applied-when = ["y = 2", "x = 6"]'
    result, outcome = run_one(load_patch, patch_toml("edit", replace_step("x = 5", "x = 6"), header=header))
    assert outcome.status is Status.FAILED
    assert outcome.detail == (
        "step 1 (replace): expected 'x = 5' once, found it 0 times in f"
        " (the file already has this patch with other parameters, or edited by hand)"
    )
    assert result.patched == SOURCE


def test_a_step_failing_where_no_marker_holds_says_only_what_failed(load_patch: Any) -> None:
    header = 'applied-when = ["x = 6"]'
    _, outcome = run_one(load_patch, patch_toml("edit", replace_step("x = 5", "x = 6"), header=header))
    assert outcome.detail == "step 1 (replace): expected 'x = 5' once, found it 0 times in f"


@pytest.mark.parametrize(
    ("header", "scope", "detail", "near"),
    [
        ('applied-when = [{pattern = "x = 2", scope = "fn"}]', "f",
         "no class or function 'fn' in the module (scope fn)", "scopes with close names: f"),
        ('requires = [{pattern = "x = 1", scope = "F"}]', "f",
         "no class or function 'F' in the module (scope F)", "no class or function has a close name"),
        ("", "g", "step 1 (replace): no class or function 'g' in the module in g",
         "no class or function has a close name"),
    ],
    ids=["marker", "requirement", "step"],
)
def test_a_missing_scope_names_the_scope_and_the_close_names(
    load_patch: Any, header: str, scope: str, detail: str, near: str
) -> None:
    result, outcome = run_one(load_patch, patch_toml("edit", replace_step("x = 1", "x = 2"), scope=scope, header=header))
    assert outcome.status is Status.FAILED
    assert outcome.message == f"{detail}; {near}"
    assert outcome.diagnostic is not None and outcome.diagnostic.kind == "scope"
    assert outcome.diagnostic.scope == detail.split("'")[1]  # the missing scope's name
    assert outcome.patch.id == "edit"
    assert outcome.diagnostic.step == (1 if "step" in detail else None)
    assert result.patched == SOURCE


def test_a_missing_marker_scope_is_named_even_after_markers_whose_scope_exists(load_patch: Any) -> None:
    header = 'applied-when = ["y = 2", {pattern = "x = 2", scope = "fn"}]'
    _, outcome = run_one(load_patch, patch_toml("edit", replace_step("x = 1", "x = 2"), header=header))
    assert outcome.message == "no class or function 'fn' in the module (scope fn); scopes with close names: f"
    assert outcome.diagnostic is not None and outcome.diagnostic.scope == "fn"


def test_a_later_step_that_finds_nothing_names_the_closest_lines_as_read(load_patch: Any) -> None:
    # Step 1 adds two lines above 'y = 2': the closest code is still named
    # by its line in the file as read (3), not in the half-patched one (5).
    steps = replace_step("x = 1", "x = 1\nw = 0\nv = 0") + replace_step("y = 5", "y = 6")
    result, outcome = run_one(load_patch, patch_toml("edit", steps))
    assert outcome.status is Status.FAILED
    assert outcome.message == (
        "step 2 (replace): expected 'y = 5' once, found it 0 times in f;"
        " closest: line 3, statement 1 differs: pattern 'y = 5', code 'y = 2'"
    )
    diagnostic = outcome.diagnostic
    assert diagnostic is not None
    assert (diagnostic.kind, diagnostic.scope, diagnostic.pattern, diagnostic.step) == ("step", "f", "y = 5", 2)
    assert result.patched == SOURCE


def test_an_insert_whose_anchor_finds_nothing_names_the_closest_code(load_patch: Any) -> None:
    steps = '''
[[steps]]
op = "insert"
before = "y = 5"
code = "z = 0"
'''
    _, outcome = run_one(load_patch, patch_toml("edit", steps))
    assert outcome.status is Status.FAILED
    assert outcome.diagnostic is not None and outcome.diagnostic.pattern == "y = 5"
    assert outcome.message.endswith("; closest: line 3, statement 1 differs: pattern 'y = 5', code 'y = 2'")


def test_a_pattern_found_too_often_has_no_closest_code(load_patch: Any) -> None:
    source = b"def f():\n    x = 1\n    x = 1\n"
    _, outcome = run_one(load_patch, patch_toml("edit", replace_step("x = 1", "x = 2")), source)
    assert outcome.status is Status.FAILED
    assert outcome.diagnostic is None
    assert outcome.message == "step 1 (replace): expected 'x = 1' once, found it 2 times in f"


@dataclasses.dataclass(frozen=True)
class _Refuses(Operation):
    """A step that looks for no pattern and always fails."""

    name = "refuses"

    @classmethod
    def _convert(cls, config: Any, render: Any) -> dict[str, Any]:
        return {}

    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        raise StepFailed("refused")

    def describe(self) -> str:
        return "nothing"


def test_a_failing_step_without_a_pattern_has_no_closest_code(load_patch: Any) -> None:
    patch = load_patch(patch_toml("edit", replace_step("y = 2", "y = 3")))
    patch = dataclasses.replace(patch, code=PatchCode("digest", lambda: ((_Refuses(),), (), ())))
    (outcome,) = patch_source("x.py", SOURCE, [patch]).outcomes
    assert (outcome.status, outcome.detail, outcome.diagnostic) == (Status.FAILED, "step 1 (refuses): refused in f", None)


@pytest.mark.parametrize("source", [
    "# -*- coding: latin-1 -*-\ndef f():\n    x = 1\n    y = 2\n".encode("latin-1"),
    "# vim: set fileencoding=ascii :\ndef f():\n    x = 1\n    y = 2\n".encode("ascii"),
])
def test_a_patch_writing_what_the_files_encoding_cannot_hold_fails_and_changes_nothing(load_patch: Any,
                                                                                       source: bytes) -> None:
    result, outcome = run_one(load_patch, patch_toml("euro", replace_step("y = 2", 'y = "\u20ac"')), source)
    assert outcome.status is Status.FAILED
    assert outcome.detail is not None and outcome.detail.startswith("writes '\u20ac' (U+20AC) on line 4, which the "
                                                                    "file's encoding (")
    assert result.patched == source  # nothing written, nothing half-encoded


def test_a_later_patch_runs_on_the_code_before_one_that_could_not_be_saved(load_patch: Any) -> None:
    source = "# -*- coding: latin-1 -*-\ndef f():\n    x = 1\n    y = 2\n".encode("latin-1")
    statuses = run_series(load_patch, source, ("euro", replace_step("y = 2", 'y = "\u20ac"')),
                          ("plain", replace_step("x = 1", "x = 3")))
    assert [(name, status) for name, status, _ in statuses] == [("euro", Status.FAILED), ("plain", Status.APPLIED)]


def test_a_file_libcst_cannot_tokenize_is_left_unpatched_saying_what_libcst_stopped_at() -> None:
    # A NUL in the source: libcst's tokenizer names it, and Python 3.11 cannot place it on a line (ValueError).
    source = b"x = 1\x00\n"
    result = patch_source("x.py", source, [])
    assert result.patched == source
    assert result.parse_error.startswith("line 1: tokenizer error: '\\0' is not a valid character")
    assert "it does not parse under Python" in result.parse_error
