"""``applied-when`` and ``requires``: lists of patterns, or tables with a pattern and a scope, rendered with the parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.patchset.conftest import edit_refusal, load_edit


def test_markers_are_patterns_or_tables_with_a_scope(tmp_path: Path) -> None:
    patch = load_edit(tmp_path, extra='applied-when = ["x = {{ n }}", {pattern = "y = $Y", scope = "g"}]\n'
                      'requires = ["z = $_"]', overrides=("edit.n=7",))
    assert [(str(m.pattern), m.scope) for m in patch.applied_when] == [("x = 7", "f"), ("y = $Y", "g")]
    assert [(str(m.pattern), m.scope) for m in patch.requires] == [("z = $_", "f")]


@pytest.mark.parametrize(("extra", "message"), [
    ('applied-when = "x = 2"', "edit.toml: 'applied-when' must be a list of patterns"),
    ('applied-when = [{scope = "g"}]', "edit.toml: 'applied-when[1]' must be a pattern or a table with 'pattern'"),
    ("requires = [3]", "edit.toml: 'requires[1]' must be a pattern or a table with 'pattern'"),
    ('applied-when = [{pattern = 3}]', "edit.toml: 'applied-when[1].pattern' must be a string, not an integer"),
    ('requires = [{pattern = "x = 2", scope = ["g"]}]', "edit.toml: 'requires[1].scope' must be a string, not an array"),
    ('applied-when = [{pattern = "x = 2", scop = "g"}]',
     "edit.toml: unknown key 'applied-when[1].scop'; did you mean 'scope'?"),
    ('applied-when = ["x = 2", "x = {{ nope }}"]',
     "edit.toml: applied-when[2]: template uses an undefined variable: 'nope' is undefined (in 'pattern')"),
])
def test_bad_markers_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    assert edit_refusal(tmp_path, extra=extra) == message


def test_a_marker_that_is_not_python_is_refused(tmp_path: Path) -> None:
    assert edit_refusal(tmp_path, extra='requires = ["x = = 2"]').startswith(
        "edit.toml: requires[1]: pattern in 'pattern' is not valid Python at line 1, column ")
