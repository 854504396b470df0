"""``set -a`` (``set -o allexport``, ``sh -a``): every variable assigned while it is on is exported.

A child shell (``sh -c``, a script the install script runs) then sees
it; one assigned after ``set +a`` stays the script's own. Checked with
bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "placed"), [
    ("set -a\nD=/dest\nset +a\nsh -c 'cp x.py $D/a.py'\n", ["/dest/a.py"]),
    ("set -o allexport\nD=/dest\nsh -c 'cp x.py $D/b.py'\n", ["/dest/b.py"]),
    ("set -a\nset +a\nE=/dest\nsh -c 'cp x.py ${E:-/tmp}/e.py'\n", []),  # assigned after set +a: not exported
    ("D=/dest\nsh -c 'cp x.py ${D:-/tmp}/f.py'\n", []),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_variable_assigned_under_set_a_reaches_a_child_shell(script: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(script, run)) == placed


def test_sh_a_exports_what_its_script_assigns() -> None:
    files = {"s/inner.sh": "cp x.py $D/inner.py\n"}
    assert in_dest(run_script("D=/dest\nsh inner.sh\n", "sh -a i.sh", files)) == ["/dest/inner.py"]
