"""Print how many tests and assertions tests/ holds, so a reorganisation can show it lost none.

    python benchmarks/count_tests.py [TESTS_DIR]
    python benchmarks/count_tests.py --run TEST_FILE...

Counts test functions (``def test_*``), collected test cases (parametrised
ones counted per case, through ``pytest --collect-only``), ``assert``
statements, and ``pytest.raises``/``pytest.warns`` calls.

Folding tests written out one by one into one parametrised test lowers the
written ``assert`` count while every case still asserts the same, so
``--run`` counts what the static count cannot: the assertions that pass
while those files run (pytest's ``pytest_assertion_pass`` hook). Run it on
the same files before and after a change (``git worktree add`` the commit
before) to show nothing asserted is lost.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


def count_source(folder: Path) -> dict[str, int]:
    """Count test functions, asserts and raises/warns calls in every .py file under FOLDER."""
    counts = {"files": 0, "functions": 0, "asserts": 0, "raises": 0}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        counts["files"] += path.name.startswith("test_")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                counts["functions"] += 1
            elif isinstance(node, ast.Assert):
                counts["asserts"] += 1
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("raises", "warns")
            ):
                counts["raises"] += 1
    return counts


def count_collected(folder: Path) -> int:
    """Return how many test cases pytest collects under FOLDER."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    return sum(1 for line in done.stdout.splitlines() if "::" in line)


class _AssertionCounter:
    """A pytest plugin: counts the assertions that pass."""

    def __init__(self) -> None:
        self.passed = 0

    def pytest_assertion_pass(self) -> None:
        self.passed += 1


def count_run(arguments: list[str]) -> dict[str, int]:
    """Run pytest on ``arguments`` and count the assertions that pass and the tests."""
    import pytest

    counter = _AssertionCounter()
    status = pytest.main(["-q", "-p", "no:cacheprovider", "-o", "enable_assertion_pass_hook=true", *arguments],
                         plugins=[counter])
    if status != 0:
        raise SystemExit(f"count_tests: pytest ended with {int(status)}: the counts would not be comparable")
    return {"asserts_run": counter.passed}


def main() -> None:
    if sys.argv[1:2] == ["--run"]:
        counts = count_run(sys.argv[2:])
        print(" ".join(f"{name}={value}" for name, value in counts.items()))
        return
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "tests")
    counts = count_source(folder)
    counts["collected"] = count_collected(folder)
    print(" ".join(f"{name}={value}" for name, value in counts.items()))


if __name__ == "__main__":
    main()
