"""A patch that no longer applies on NEW names the closest code there.

Where the code differs inside a branch, the branch and the statement there are named.
"""

from __future__ import annotations

import ast

from tests.fixtures_cli import SERIES, assert_unchanged, patch_of, scopes_of, upgrade
from tests.fixtures_vendor import SHIPPED


def test_a_patch_that_no_longer_applies_names_the_closest_code(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "no-longer-applies")
    assert code == 1
    patch = patch_of(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "fails")
    source = (tmp_path / "pair" / "new" / SHIPPED).read_text()
    first, override = _use_v1_lines(source)
    assert patch["diagnostic"].startswith("step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    assert patch["diagnostic"].endswith(
        f"; closest: lines {first}-{override}, statement 2 differs: pattern 'use_v1 = True', "
        "code 'use_v1 = actual_max <= 8192'")
    closest = patch["closest"]
    assert (closest["kind"], closest["scope"], closest["step"]) == ("step", "PagedAttention.forward_decode", 2)
    assert closest["closest"] == {"first_line": first, "last_line": override, "statement": 2, "inside": "",
                                  "pattern": "use_v1 = True", "code": "use_v1 = actual_max <= 8192",
                                  "matched": 1, "differing_tokens": closest["closest"]["differing_tokens"]}
    assert scopes_of(patch)["PagedAttention.forward_decode"]["changed"] is True
    for patch_id in SERIES[1:]:
        assert_unchanged(patch_of(report, patch_id))


def _use_v1_lines(source: str) -> tuple[int, int]:
    """Lines of the two ``use_v1 = ...`` assignments in forward_decode, found with ast."""
    lines = [n.lineno for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "use_v1" for t in n.targets)]
    assert len(lines) == 2
    return lines[0], lines[1]


def test_a_statement_added_inside_a_branch_is_named_where_it_is(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, report = upgrade(cli, tmp_path, "v2-branch-grows")
    assert code == 1
    patch = patch_of(report, "three-tier-decode")
    assert (patch["old"], patch["new"]) == ("applies", "fails")
    tree = ast.parse((tmp_path / "pair" / "new" / SHIPPED).read_text())
    [branch] = [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "use_v1"]
    closest = patch["closest"]["closest"]
    assert (closest["statement"], closest["matched"]) == (3, 2)
    assert closest["inside"] == f"in its else, statement {len(branch.orelse)}"
    assert (closest["pattern"], closest["code"]) == ("", "torch.cuda.synchronize()")
    assert closest["last_line"] == branch.end_lineno
    assert patch["diagnostic"].endswith(
        f"statement 3 differs (in its else, statement {len(branch.orelse)}): "
        "the code goes on with 'torch.cuda.synchronize()'")
