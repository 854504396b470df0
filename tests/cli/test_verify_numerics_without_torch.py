"""``verify-numerics`` without a working PyTorch: one line, exit 2, whether PyTorch is missing or fails to load.

PyTorch is an optional extra (``patcher[numerics]``), and an installed one
can still fail to import (a missing shared library): neither is a bug in
patcher (exit 3), and both say what to install. These run with or without
PyTorch: a stand-in ``torch`` package on PYTHONPATH takes its place.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_vendor import ROOT, VENDOR_ZIP

STAND_INS = {
    "missing": ("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n",
                "error: verify-numerics needs PyTorch, which is not installed (pip install 'patcher[numerics]')"),
    "broken": ("raise OSError('libtorch_cpu.so: cannot open shared object file: No such file or directory')\n",
               "error: verify-numerics needs PyTorch, which does not import (OSError: libtorch_cpu.so: cannot open "
               "shared object file: No such file or directory) (pip install 'patcher[numerics]')"),
    "broken import": ("raise ImportError('numpy.core.multiarray failed to import')\n",
                      "error: verify-numerics needs PyTorch, which does not import (ImportError: "
                      "numpy.core.multiarray failed to import) (pip install 'patcher[numerics]')"),
}


@pytest.mark.parametrize("kind", sorted(STAND_INS))
def test_verify_numerics_without_a_working_pytorch_is_one_line_exit_2(tmp_path: Path, kind: str) -> None:
    code, line = STAND_INS[kind]
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "patcher", "verify-numerics", str(VENDOR_ZIP)], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")
