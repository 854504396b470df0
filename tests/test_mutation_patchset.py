"""Running and loading a patch series: what mutation testing found unasserted (issue 13).

Each test fails for at least one mutant of patcher/patchset that survived
the rest of the fast suite: the exact line each failure gives, outcomes
that survive the cache's round trip, and two patches touching one line.
"""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Any

import pytest

from patcher.patchset.runner import FileOutcome, PatchOutcome, Status, patch_source

PY = f"{sys.version_info.major}.{sys.version_info.minor}"

SOURCE = b"def f():\n    x = 1\n    y = 2\n    return x + y\n"

REPLACE = '''
[[steps]]
op = "replace"
pattern = "{pattern}"
code = "{code}"
'''


def _patch_text(patch_id: str, steps: str, *, scope: str = "f", header: str = "") -> str:
    return textwrap.dedent(f'''
        id = "{patch_id}"
        description = "An edit"
        origin = "test"
        last-update = "2026-11-29"
        target = "x.py"
        scope = "{scope}"
    ''') + header + "\n" + textwrap.dedent(steps)


def _replace(pattern: str, code: str) -> str:
    return REPLACE.format(pattern=pattern, code=code)


def _one(load_patch: Any, text: str, source: bytes = SOURCE) -> tuple[FileOutcome, PatchOutcome]:
    result = patch_source("x.py", source, [load_patch(text)])
    (outcome,) = result.outcomes
    return result, outcome


# --- files that cannot be patched ---------------------------------------------------


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (b"s = '\xe9'\n", "cannot be decoded: invalid or missing encoding declaration"
         " (not UTF-8 and no '# -*- coding: ... -*-' line)"),
        (b"a = 1\nb = 2\nc = 3\ns = '\xe9'\n", "cannot be decoded: line 4: not utf-8"
         " (declare the encoding with a '# -*- coding: ... -*-' line)"),
        (b"def broken(:\n", "line 2, column 0: expected one of ), *, **, NAME;"
         f" it does not parse under Python {PY} either (Python 2 code, or a broken file?)"),
        (b"x = 1\r\ny = 2\nz = 3\r", "would not round-trip byte for byte (lone CR line endings?);"
         " convert it to LF or CRLF line endings first"),
    ],
    ids=["not-utf8", "not-utf8-further-down", "broken", "lone-cr"],
)
def test_a_file_that_cannot_be_patched_is_one_failed_outcome_left_unchanged(
    load_patch: Any, source: bytes, error: str
) -> None:
    result = patch_source("x.py", source, [load_patch(_patch_text("edit", _replace("x = 1", "x = 2")))])
    assert result == FileOutcome("x.py", source, source, (), error)
    assert result.failed and not result.changed


def test_a_file_that_parses_is_not_failed_until_a_patch_fails(load_patch: Any) -> None:
    result = patch_source("x.py", SOURCE, [])
    assert result == FileOutcome("x.py", SOURCE, SOURCE, ())
    assert not result.failed and not result.changed
    result, outcome = _one(load_patch, _patch_text("edit", _replace("y = 2", "y = 3")))
    assert outcome.status is Status.APPLIED and result.changed and not result.failed


# --- failures, word for word --------------------------------------------------------------


def test_a_missing_requirement_names_it_and_the_closest_code(load_patch: Any) -> None:
    result, outcome = _one(load_patch, _patch_text("edit", _replace("y = 2", "y = 3"), header='requires = ["z = 9"]'))
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


def test_a_missing_requirement_after_an_earlier_patch_names_lines_as_read(load_patch: Any) -> None:
    lead = load_patch(_patch_text(*LEAD_TEXT))
    needs = load_patch(_patch_text("needs", _replace("y = 2", "y = 3"), header='requires = ["y = 5"]'))
    result = patch_source("x.py", SOURCE, [lead, needs])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.FAILED]
    assert result.outcomes[1].message == (
        "needs 'y = 5' in f, which is not there; closest: line 3, statement 1 differs: pattern 'y = 5', code 'y = 2'"
    )


LEAD_TEXT = ("lead", _replace("x = 1", "x = 1\\nw = 0"))


def test_an_already_applied_patch_is_named_in_its_outcome(load_patch: Any) -> None:
    _, outcome = _one(load_patch, _patch_text("edit", _replace("y = 5", "y = 2"), header='applied-when = ["y = 2"]'))
    assert (outcome.patch.id, outcome.status, outcome.message) == ("edit", Status.ALREADY_APPLIED, "")


def test_a_requirement_that_is_there_lets_the_patch_apply(load_patch: Any) -> None:
    result, outcome = _one(load_patch, _patch_text("edit", _replace("y = 2", "y = 3"), header='requires = ["x = 1"]'))
    assert outcome.status is Status.APPLIED
    assert result.patched == SOURCE.replace(b"y = 2", b"y = 3")


def test_a_failure_without_a_diagnostic_is_its_detail_alone() -> None:
    outcome = PatchOutcome(None, Status.FAILED, "the result does not match")  # type: ignore[arg-type]
    assert outcome.message == "the result does not match"


def test_a_step_failing_where_the_main_marker_holds_says_the_patch_may_be_there(load_patch: Any) -> None:
    # The first marker holds, the second does not: the file has the patch
    # with other parameters (or edited by hand), and the step finds nothing.
    header = 'applied-when = ["y = 2", "x = 6"]'
    result, outcome = _one(load_patch, _patch_text("edit", _replace("x = 5", "x = 6"), header=header))
    assert outcome.status is Status.FAILED
    assert outcome.detail == (
        "step 1 (replace): expected 'x = 5' once, found it 0 times in f"
        " (the file already has this patch with other parameters, or edited by hand)"
    )
    assert result.patched == SOURCE


def test_a_step_failing_where_no_marker_holds_says_only_what_failed(load_patch: Any) -> None:
    header = 'applied-when = ["x = 6"]'
    _, outcome = _one(load_patch, _patch_text("edit", _replace("x = 5", "x = 6"), header=header))
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
    result, outcome = _one(load_patch, _patch_text("edit", _replace("x = 1", "x = 2"), scope=scope, header=header))
    assert outcome.status is Status.FAILED
    assert outcome.message == f"{detail}; {near}"
    assert outcome.diagnostic is not None and outcome.diagnostic.kind == "scope"
    assert outcome.diagnostic.scope == detail.split("'")[1]  # the missing scope's name
    assert outcome.patch.id == "edit"
    assert outcome.diagnostic.step == (1 if "step" in detail else None)
    assert result.patched == SOURCE


def test_two_patches_rewriting_one_line_fail_the_second_and_keep_the_first(load_patch: Any) -> None:
    first = load_patch(_patch_text("first", _replace("y = 2", "y = 3")))
    second = load_patch(_patch_text("second", _replace("y = 3", "y = 4")))
    result = patch_source("x.py", SOURCE, [first, second])
    assert [(o.patch.id, o.status) for o in result.outcomes] == [("first", Status.APPLIED), ("second", Status.FAILED)]
    assert result.outcomes[1].detail == (
        "rewrites code that patch first wrote (line 3); two patches must not rewrite"
        " the same code: merge them or reorder the series"
    )
    assert result.patched == SOURCE.replace(b"y = 2", b"y = 3")


def test_two_patches_on_different_lines_both_apply(load_patch: Any) -> None:
    first = load_patch(_patch_text("first", _replace("y = 2", "y = 3")))
    second = load_patch(_patch_text("second", _replace("x = 1", "x = 4")))
    result = patch_source("x.py", SOURCE, [first, second])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED]
    assert result.patched == b"def f():\n    x = 4\n    y = 3\n    return x + y\n"


# --- outcomes as the cache stores them -----------------------------------------------------


def test_outcomes_read_back_from_their_records_unchanged(load_patch: Any) -> None:
    applied = load_patch(_patch_text("applied", _replace("y = 2", "y = 3")))
    failed = load_patch(_patch_text("failed", _replace("z = 2", "z = 3")))
    result = patch_source("x.py", SOURCE, [applied, failed])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.FAILED]
    assert result.outcomes[0].prints and result.outcomes[1].diagnostic is not None
    for outcome in result.outcomes:
        record = json.loads(json.dumps(outcome.to_record()))
        assert record[:3] == [outcome.patch.id, outcome.status.value, outcome.detail]
        assert PatchOutcome.from_record(outcome.patch, record) == outcome


def test_lines_a_patch_wrote_are_tracked_as_later_patches_move_them(load_patch: Any) -> None:
    # 'grow' turns one line into two, moving the lines below it down; 'below'
    # rewrites a line no patch wrote (line 3 as read, 4 now); 'again'
    # rewrites the second line 'grow' wrote.
    grow = load_patch(_patch_text("grow", _replace("x = 1", "x = 1\\nx += 0")))
    below = load_patch(_patch_text("below", _replace("y = 2", "y = 3")))
    again = load_patch(_patch_text("again", _replace("x += 0", "x += 5")))
    source = b"def f():\n    x = 1\n    y = 2\n    return x + y\n"
    result = patch_source("x.py", source, [grow, below, again])
    assert [(o.patch.id, o.status) for o in result.outcomes] == [
        ("grow", Status.APPLIED), ("below", Status.APPLIED), ("again", Status.FAILED)
    ]
    assert result.outcomes[2].detail == (
        "rewrites code that patch grow wrote (line 3); two patches must not rewrite"
        " the same code: merge them or reorder the series"
    )
    assert result.patched == b"def f():\n    x = 1\n    x += 0\n    y = 3\n    return x + y\n"


def test_a_later_step_that_finds_nothing_names_the_closest_lines_as_read(load_patch: Any) -> None:
    # Step 1 adds two lines above 'y = 2': the closest code is still named
    # by its line in the file as read (3), not in the half-patched one (5).
    steps = _replace("x = 1", "x = 1\\nw = 0\\nv = 0") + _replace("y = 5", "y = 6")
    result, outcome = _one(load_patch, _patch_text("edit", steps))
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
    _, outcome = _one(load_patch, _patch_text("edit", steps))
    assert outcome.status is Status.FAILED
    assert outcome.diagnostic is not None and outcome.diagnostic.pattern == "y = 5"
    assert outcome.message.endswith("; closest: line 3, statement 1 differs: pattern 'y = 5', code 'y = 2'")


def test_a_pattern_found_too_often_has_no_closest_code(load_patch: Any) -> None:
    source = b"def f():\n    x = 1\n    x = 1\n"
    _, outcome = _one(load_patch, _patch_text("edit", _replace("x = 1", "x = 2")), source)
    assert outcome.status is Status.FAILED
    assert outcome.diagnostic is None
    assert outcome.message == "step 1 (replace): expected 'x = 1' once, found it 2 times in f"


def test_a_missing_marker_scope_is_named_even_after_markers_whose_scope_exists(load_patch: Any) -> None:
    header = 'applied-when = ["y = 2", {pattern = "x = 2", scope = "fn"}]'
    _, outcome = _one(load_patch, _patch_text("edit", _replace("x = 1", "x = 2"), header=header))
    assert outcome.message == "no class or function 'fn' in the module (scope fn); scopes with close names: f"
    assert outcome.diagnostic is not None and outcome.diagnostic.scope == "fn"


GROW = ("grow", "y = 2", "y = 2\\ny += 0")  # writes one new line below 'y = 2'
LEAD = ("lead", "x = 1", "x = 1\\nw = 0")  # then one above it, moving it down


@pytest.mark.parametrize(
    ("last", "status", "detail"),
    [
        (("again", "y += 0", "y += 5"), Status.FAILED,
         "rewrites code that patch grow wrote (line 5); two patches must not rewrite"
         " the same code: merge them or reorder the series"),
        (("other", "y = 2", "y = 3"), Status.APPLIED, ""),  # where grow's line was before 'lead' moved it
    ],
    ids=["rewrites-the-moved-line", "rewrites-the-line-now-above-it"],
)
def test_a_patchs_lines_are_followed_as_later_patches_move_them(
    load_patch: Any, last: tuple[str, str, str], status: Status, detail: str
) -> None:
    patches = [load_patch(_patch_text(pid, _replace(old, new))) for pid, old, new in (GROW, LEAD, last)]
    result = patch_source("x.py", SOURCE, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED, status]
    assert result.outcomes[2].detail == detail


def test_an_applied_patch_prints_what_each_step_matched(load_patch: Any) -> None:
    steps = _replace("x = 1", "x = 4") + _replace("y = 2", "y = 3")
    _, outcome = _one(load_patch, _patch_text("edit", steps))
    assert outcome.status is Status.APPLIED
    assert [(p.step, len(p.matches)) for p in outcome.prints] == [(1, 1), (2, 1)]
    assert outcome.prints[0].matches[0] != outcome.prints[1].matches[0]  # each its own code


def test_a_license_header_and_a_file_without_a_final_newline_are_kept(load_patch: Any) -> None:
    source = b"# Copyright (c) vendor. All rights reserved.\n# SPDX-License-Identifier: Apache-2.0\n\n" + SOURCE.rstrip(b"\n")
    result, outcome = _one(load_patch, _patch_text("edit", _replace("y = 2", "y = 3")), source)
    assert outcome.status is Status.APPLIED
    assert result.patched == source.replace(b"y = 2", b"y = 3")
