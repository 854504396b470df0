"""Member paths are judged by their components, and a path's ancestors are its folders, not itself."""

from __future__ import annotations

import pytest

from patcher.archive.paths import parents, path_problem


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "has an empty name"),
        ("/", "has an empty name"),
        ("vendor-demo/../", "escapes the tree with a '..' component"),
        ("vendor-demo/./", "has an empty or '.' path component"),
        ("vendor-demo//", "has an empty or '.' path component"),
        ("vendor-demo/scripts/", None),
    ],
)
def test_folder_entries_are_judged_by_their_components(name: str, problem: str | None) -> None:
    assert path_problem(name) == problem


def test_a_folders_ancestors_leave_out_the_folder_itself() -> None:
    assert parents("vendor-demo/scripts/") == ["vendor-demo"]
    assert parents("vendor-demo/scripts/run.sh") == ["vendor-demo", "vendor-demo/scripts"]
    assert parents("Dockerfile") == []
