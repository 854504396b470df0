"""benchmarks/count_tests.py --run counts the assertions that pass, case by case, so folding tests written out one
by one into a parametrised test shows it kept every check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "count_tests.py"


def _run(folder: Path, text: str) -> subprocess.CompletedProcess[str]:
    (folder / "test_sample.py").write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), "--run", "test_sample.py"], cwd=folder,
                          capture_output=True, text=True, check=False)


def test_each_case_of_a_parametrised_test_counts_its_assertions(tmp_path: Path) -> None:
    done = _run(tmp_path, "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_a(n):\n"
                          "    assert n > 0\n    assert n < 3\n\ndef test_b():\n    assert True\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "asserts_run=5"


def test_a_failing_run_gives_no_count(tmp_path: Path) -> None:
    done = _run(tmp_path, "def test_a():\n    assert 1 == 2\n")
    assert done.returncode == 1
    assert "asserts_run" not in done.stdout
    assert "count_tests: pytest ended with 1: the counts would not be comparable" in done.stderr
