"""verify-numerics lets no third-party warning through: PyTorch without NumPy warns at import, and patcher hides exactly that.

PyTorch's CPU wheels do not depend on NumPy; without it ``import torch``
warns ``Failed to initialize NumPy``. The command runs here with every
warning an error, so any warning that reaches it fails the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures_vendor import ROOT, VENDOR_ZIP

pytest.importorskip("torch")


def without_numpy(path: Path, then: str) -> Path:
    """Write a script at PATH that runs THEN where ``import numpy`` fails, as after a bare ``pip install torch``."""
    path.write_text(textwrap.dedent('''
        import importlib.abc
        import sys


        class NoNumpy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" or name.startswith("numpy."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None


        sys.meta_path.insert(0, NoNumpy())
    ''') + then + "\n")
    return path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False)


def test_without_numpy_importing_torch_warns_and_the_command_does_not(tmp_path: Path) -> None:
    # The environment is as meant: PyTorch alone does warn there.
    bare = _run(tmp_path, "-W", "error", str(without_numpy(tmp_path / "import_torch.py", "import torch")))
    assert bare.returncode == 1 and "UserWarning: Failed to initialize NumPy" in bare.stderr
    command = without_numpy(tmp_path / "patcher_cli.py", "from patcher.cli import main\nmain()")
    done = _run(tmp_path, "-W", "error", str(command), "verify-numerics", str(VENDOR_ZIP))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1].startswith("result: OK: prefill bitwise equal in all ")


def test_with_numpy_the_command_raises_no_warning_either(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    done = _run(tmp_path, "-W", "error", "-m", "patcher", "verify-numerics", "--cases", str(VENDOR_ZIP))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
