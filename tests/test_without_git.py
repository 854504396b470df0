"""On a machine without git, the commands that need it (``diff --base``, ``apply --record-git``) say so in one line.

GitPython refuses to be imported when it finds no git (an ImportError many
lines long), or, with ``GIT_PYTHON_REFRESH=quiet``, fails at its first
command: either way the user sees one error line, exit 2, nothing written.
Each run is a fresh interpreter whose PATH holds no git, as on such a
machine (GitPython decides at import).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_vendor import PATCHES, ROOT, VENDOR_ZIP

NO_GIT = "error: git is not installed (install git, or put it on PATH)\n"


def without_git(tmp_path: Path, *args: object, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python -m patcher ARGS`` with a PATH that holds no git."""
    programs = tmp_path / "no-git"
    programs.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": str(programs), "PYTHONPATH": str(ROOT)}
    env.pop("GIT_PYTHON_GIT_EXECUTABLE", None)
    if quiet:
        env["GIT_PYTHON_REFRESH"] = "quiet"
    else:
        env.pop("GIT_PYTHON_REFRESH", None)
    # The repository root as working folder: a mutation run's child finds its settings there.
    return subprocess.run([sys.executable, "-m", "patcher", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300, check=False)


@pytest.mark.parametrize("quiet", [False, True], ids=["gitpython-refuses-import", "GIT_PYTHON_REFRESH=quiet"])
def test_diff_base_without_git_is_one_error_line(tmp_path: Path, quiet: bool) -> None:
    done = without_git(tmp_path, "diff", "--base", "HEAD", "--patches", PATCHES, VENDOR_ZIP, quiet=quiet)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", NO_GIT)


def test_apply_record_git_without_git_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    output, record = tmp_path / "ctx.tar.gz", tmp_path / "history"
    done = without_git(tmp_path, "apply", VENDOR_ZIP, "-o", output, "--record-git", record, "--patches", PATCHES)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] + "\n" == NO_GIT and "Traceback" not in done.stderr
    assert not output.exists() and not record.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["no-git"]
