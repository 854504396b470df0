"""A file that cannot be patched (not decodable, not parsable, lone CRs) is one failed outcome, left unchanged."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from patcher.depth import HINT
from patcher.patchset.runner import FileOutcome, Status, patch_source

from tests.fixtures_patches import patch_toml, replace_step
from tests.patchset.conftest import SOURCE, run_one


PY = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (b"s = '\xe9'\n", "cannot be decoded: invalid or missing encoding declaration"
         " (not UTF-8 and no '# -*- coding: ... -*-' line)"),
        (b"a = 1\nb = 2\nc = 3\ns = '\xe9'\n", "cannot be decoded: line 4: not utf-8"
         " (declare the encoding with a '# -*- coding: ... -*-' line)"),
        (b"def broken(:\n", "line 1: invalid syntax;"
         f" it does not parse under Python {PY} either (Python 2 code, or a broken file?)"),
        (b"x = 1\r\ny = 2\nz = 3\r", "would not round-trip byte for byte (lone CR line endings?);"
         " convert it to LF or CRLF line endings first"),
        # Refused before libcst sees it: its parser crashes on such nesting.
        (b"x = 1\ny = " + b"(" * 1500 + b"1" + b")" * 1500 + b"\n",
         f"nests deeper than 200 levels (brackets, operators, blocks) at line 2 ({HINT})"),
    ],
    ids=["not-utf8", "not-utf8-further-down", "broken", "lone-cr", "nested-too-deep"],
)
def test_a_file_that_cannot_be_patched_is_one_failed_outcome_left_unchanged(
    load_patch: Any, source: bytes, error: str
) -> None:
    result = patch_source("x.py", source, [load_patch(patch_toml("edit", replace_step("x = 1", "x = 2")))])
    assert result == FileOutcome("x.py", source, source, (), error)
    assert result.failed and not result.changed


def test_a_file_that_parses_is_not_failed_until_a_patch_fails(load_patch: Any) -> None:
    result = patch_source("x.py", SOURCE, [])
    assert result == FileOutcome("x.py", SOURCE, SOURCE, ())
    assert not result.failed and not result.changed
    result, outcome = run_one(load_patch, patch_toml("edit", replace_step("y = 2", "y = 3")))
    assert outcome.status is Status.APPLIED and result.changed and not result.failed
