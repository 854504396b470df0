"""The tests read as the specification, and stay that way: the rules the suite was reorganised by, kept by a test.

``tests/`` mirrors the package (a folder for each of patcher's packages);
no test file or test is named for how it was found (a mutant, a survivor)
or by a letter; and no helper is copied from one test file into another:
a builder two files need lives once, in a ``fixtures_*.py`` or a conftest.
Read from the sources with ``ast``, as ``checks/test_import_graph.py`` reads
the package.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from tests.fixtures_vendor import ROOT

TESTS = ROOT / "tests"
# How a test was found, not what it pins (a process being killed is a behaviour: 'killed' is allowed).
FOUND_BY = re.compile(r"mutation|mutant|survivor|notkilled")
# A file named by a letter or as the rest of another ('test_checks_b.py', 'test_checks_more.py').
LETTERED = re.compile(r"_(?:[a-z]|more)$")


def test_each_package_of_patcher_has_its_test_folder() -> None:
    packages = {path.parent.name for path in (ROOT / "patcher").glob("*/__init__.py")}
    assert packages and packages <= {path.name for path in TESTS.iterdir() if path.is_dir()}


def test_no_test_file_or_test_is_named_for_how_it_was_found_or_by_a_letter() -> None:
    misnamed = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if FOUND_BY.search(path.stem) or LETTERED.search(path.stem):
            misnamed.append(str(path.relative_to(ROOT)))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        misnamed += [f"{path.relative_to(ROOT)}::{node.name}" for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and FOUND_BY.search(node.name)]
    assert misnamed == []


def copied_helpers(folder: Path) -> list[list[str]]:
    """The helpers (top-level functions and fixtures that are not tests) defined with the same parameters and
    body, docstring aside, in more than one file under ``folder``: each group as 'file:name'."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(folder.rglob("*.py")):
        if "golden" in path.parts:
            continue  # the patched files apply writes: data, not test code
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("test_"):
                continue
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            key = ast.dump(node.args) + "".join(ast.dump(statement) for statement in body)
            found[key].append(f"{path.relative_to(folder)}:{node.name}")
    return [places for places in found.values() if len({place.split(":")[0] for place in places}) > 1]


def test_no_helper_is_copied_from_one_test_file_into_another() -> None:
    assert copied_helpers(TESTS) == []


def test_a_helper_copied_into_a_second_file_is_found_under_either_name(tmp_path: Path) -> None:
    helper = 'def {name}(script: str) -> str:\n    """{doc}"""\n    return script.strip() + "\\n"\n'
    (tmp_path / "test_a.py").write_text(helper.format(name="placed", doc="One."))
    (tmp_path / "test_b.py").write_text(helper.format(name="_placed", doc="Another.") + "def test_x() -> None:\n    pass\n")
    (tmp_path / "test_c.py").write_text('def placed(script: str) -> str:\n    return script\n')  # another body
    assert copied_helpers(tmp_path) == [["test_a.py:placed", "test_b.py:_placed"]]
