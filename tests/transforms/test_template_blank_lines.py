"""A blank line between a template's statements is written blank wherever the code lands, never as indentation."""

from __future__ import annotations

from typing import Any

from tests.fixtures_patches import insert_step


def test_a_blank_line_in_inserted_code_has_no_trailing_whitespace(run_steps: Any) -> None:
    source = "class A:\n    def f(self):\n        x = 1\n        return x\n"
    patched, outcome = run_steps(insert_step("after", "x = 1", "y = 2\n\nz = 3"), source, scope="A.f")
    assert outcome.status.value == "applied", outcome.message
    assert patched == "class A:\n    def f(self):\n        x = 1\n        y = 2\n\n        z = 3\n        return x\n"
