"""A call at a Python helper's top level that raises ends the program there: nothing after it runs, and the
helper fails (an uncaught exception: status 1), so its RUN does. Expectations from CPython 3.11 run on the same
tree (the helper in /w/s beside x.py and sub/y.py, /dest an empty folder)."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_helper

RUN_FAILS = ("fails", "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted "
                      "before it)")


@pytest.mark.parametrize(("helper", "placed"), [
    pytest.param("import os, shutil\nos.makedirs('/dest/a')\nos.makedirs('/dest/a')\nshutil.copy('x.py', '/dest/a/')\n",
                 [], id="makedirs-of-a-folder-there"),
    pytest.param("import os, shutil\nos.mkdir('/dest')\nshutil.copy('x.py', '/dest/')\n", [], id="mkdir-of-a-folder-there"),
    pytest.param("import os, shutil\nos.mkdir('/dest/a/b')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="mkdir-without-the-folder-above"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/a').mkdir()\nPath('/dest/a').mkdir()\n"
                 "shutil.copy('x.py', '/dest/a/')\n", [], id="path-mkdir-of-a-folder-there"),
    pytest.param("import os, shutil\nshutil.copy('x.py', '/dest/f')\nos.makedirs('/dest/f/g', exist_ok=True)\n"
                 "shutil.copy('sub/y.py', '/dest/')\n", ["/dest/f"], id="makedirs-through-a-file"),
    pytest.param("import shutil\nshutil.copytree('sub', '/dest/s')\nshutil.copytree('sub', '/dest/s')\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/s/y.py"], id="copytree-onto-its-own-copy"),
    pytest.param("import os, shutil\nshutil.copytree('sub', '/dest/s')\nos.rmdir('/dest/s')\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/s/y.py"], id="rmdir-of-a-folder-that-holds-files"),
    pytest.param("import os, shutil\nshutil.copy('x.py', '/dest/e.py')\nos.symlink('/w/s/sub/y.py', '/dest/e.py')\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/e.py"], id="symlink-onto-a-file"),
    pytest.param("import shutil\nshutil.copy('sub', '/dest/')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="copy-of-a-folder"),
    # /w/s is the build's own folder: what is not in it is known to be missing.
    pytest.param("import shutil\nshutil.copy('missing.py', '/dest/')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="copy-of-a-file-not-there"),
    pytest.param("import os, shutil\nos.remove('/dest/none.py')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="remove-of-a-file-not-there"),
    pytest.param("import os, shutil\nos.unlink('gone.py')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="unlink-of-a-file-not-there"),
    pytest.param("import os, shutil\nos.removedirs('/dest/none')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="removedirs-of-a-folder-not-there"),
    pytest.param("import shutil\nshutil.rmtree('/dest/none')\nshutil.copy('x.py', '/dest/')\n", [],
                 id="rmtree-of-a-folder-not-there"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/none.py').unlink()\nshutil.copy('x.py', '/dest/')\n",
                 [], id="path-unlink-of-a-file-not-there"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/none').rmdir()\nshutil.copy('x.py', '/dest/')\n",
                 [], id="path-rmdir-of-a-folder-not-there"),
    pytest.param("import os, shutil\nshutil.copy('x.py', '/dest/f')\nos.rmdir('/dest/f')\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/f"], id="rmdir-of-a-file"),
    pytest.param("import shutil\nshutil.copy('x.py', '/dest/f')\nshutil.rmtree('/dest/f')\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/f"], id="rmtree-of-a-file"),
    pytest.param("import os, shutil\nshutil.copy('x.py', '/dest/f')\nos.remove('/dest/f')\nos.remove('/dest/f')\n"
                 "shutil.copy('x.py', '/dest/')\n", [], id="remove-twice"),
])
def test_what_comes_after_a_raising_call_never_runs(helper: str, placed: list[str]) -> None:
    plan = run_helper(helper, "python3 h.py || true\n")
    assert in_dest(plan) == placed
    assert [n.kind for n in plan.notes] == ["fails"]


@pytest.mark.parametrize("helper", [
    "import os, shutil\nos.makedirs('/dest/a')\nos.makedirs('/dest/a')\nshutil.copy('x.py', '/dest/a/')\n",
    "import os\nos.mkdir('/dest/a/b')\n",
    "import shutil\nshutil.copytree('sub', '/dest/s')\nshutil.copytree('sub', '/dest/s')\n",
])
def test_a_helper_whose_call_raises_fails_its_run(helper: str) -> None:
    plan = run_helper(helper)
    assert [(n.kind, n.reason) for n in plan.notes][-1] == RUN_FAILS


@pytest.mark.parametrize(("helper", "placed"), [
    pytest.param("import os, shutil\nos.makedirs('/dest/a', exist_ok=True)\nos.makedirs('/dest/a', 0o755, True)\n"
                 "shutil.copy('x.py', '/dest/a/')\n", ["/dest/a/x.py"], id="makedirs-exist-ok"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/a').mkdir()\nPath('/dest/a').mkdir(exist_ok=True)\n"
                 "shutil.copy('x.py', '/dest/a/')\n", ["/dest/a/x.py"], id="path-mkdir-exist-ok"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/a/b').mkdir(0o755, True, True)\n"
                 "Path('/dest/a/b').mkdir(0o755, True, True)\nshutil.copy('x.py', '/dest/a/b/')\n", ["/dest/a/b/x.py"],
                 id="path-mkdir-parents-and-exist-ok-by-position"),
    pytest.param("import os, shutil\nos.mkdir('/dest/a')\nos.mkdir('/dest/a/b')\nshutil.copy('x.py', '/dest/a/b/')\n",
                 ["/dest/a/b/x.py"], id="mkdir-one-level-at-a-time"),
    pytest.param("import os, shutil\nos.rename('x.py', 'x.py')\nshutil.copy('x.py', '/dest/')\n", ["/dest/x.py"],
                 id="rename-onto-itself-does-nothing"),
    pytest.param("import os, shutil\nos.replace('/w/s/x.py', '/w/s/./x.py')\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/x.py"], id="replace-onto-itself-does-nothing"),
    pytest.param("import shutil\nshutil.rmtree('/dest/none', ignore_errors=True)\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/x.py"], id="rmtree-ignoring-errors"),
    pytest.param("import shutil\nshutil.rmtree('/dest/none', True)\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/x.py"], id="rmtree-ignoring-errors-by-position"),
    pytest.param("import shutil\nshutil.rmtree('/dest/none', onerror=lambda *a: None)\nshutil.copy('x.py', '/dest/')\n",
                 ["/dest/x.py"], id="rmtree-with-an-error-handler"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/none.py').unlink(missing_ok=True)\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/x.py"], id="path-unlink-missing-ok"),
    pytest.param("from pathlib import Path\nimport shutil\nPath('/dest/none.py').unlink(True)\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/x.py"], id="path-unlink-missing-ok-by-position"),
    pytest.param("import os, shutil\nos.symlink('/dest/nothing', '/dest/l')\nos.remove('/dest/l')\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/x.py"], id="remove-of-a-link-that-leads-nowhere"),
    pytest.param("import os, shutil\nos.symlink('/dest/nothing', '/dest/l')\nos.rename('/dest/l', '/dest/m')\n"
                 "shutil.copy('x.py', '/dest/')\n", ["/dest/x.py"], id="rename-of-a-link-that-leads-nowhere"),
])
def test_a_call_cpython_carries_out_raises_nothing(helper: str, placed: list[str]) -> None:
    plan = run_helper(helper)
    assert in_dest(plan) == placed
    assert plan.notes == ()


def test_a_raising_call_the_program_may_not_make_does_not_end_it() -> None:
    # Inside a function under try/except: CPython goes on and copies x.py.
    helper = ("import os, shutil\ndef f():\n    os.mkdir('/dest')\ntry:\n    f()\nexcept OSError:\n    pass\n"
              "shutil.copy('x.py', '/dest/')\n")
    plan = run_helper(helper)
    assert in_dest(plan) == ["/dest/x.py"]
    assert RUN_FAILS not in [(n.kind, n.reason) for n in plan.notes]
