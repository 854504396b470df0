"""A Python helper's moves, removals and folders inside an imported package's folder (``vllm.__file__``'s).

Where the image installed the package only the image knows, so such a path
is matched against every place the build put that package's files
(``**/vllm/ops.py``). Pins: moving or removing one of those files away is
unread, scoped to that pattern, where the build placed a file there, and
says nothing where it did not; making a folder there is the package's
business, never a failure of the helper (the folder above it, the package's
own, is there). Each helper was run under CPython 3.11 with a vllm package
on its path: the move and the removal take the file away, the folder is
made, and each ends with 0.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_helper

SITE = "/usr/local/lib/python3.11/site-packages/vllm"
MOVE = ("import os, shutil, vllm\n"
        "shutil.move(os.path.join(os.path.dirname(vllm.__file__), 'ops.py'), '/dest/ops.py')\n")


def test_moving_a_package_file_the_build_placed_is_unread_wherever_the_package_is() -> None:
    plan = run_helper(MOVE, f"cp x.py {SITE}/ops.py\npython3 h.py\n")
    assert plan.image[f"{SITE}/ops.py"].source == "s/x.py"
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 2, "h.py removes vllm/ops.py of the installed package, where the build placed files",
         ("**/vllm/ops.py",))]
    assert [note.reason for note in plan.caveats("s/x.py")] == [
        "h.py removes vllm/ops.py of the installed package, where the build placed files"]


def test_moving_a_package_file_the_build_did_not_place_says_nothing() -> None:
    plan = run_helper(MOVE)
    assert in_dest(plan) == []
    assert plan.notes == ()


@pytest.mark.parametrize("placed", [False, True])
def test_removing_a_package_file_is_unread_only_where_the_build_placed_one(placed: bool) -> None:
    plan = run_helper("import os, shutil, vllm\n"
                      "os.remove(os.path.join(os.path.dirname(vllm.__file__), 'ops.py'))\n"
                      "shutil.copy('x.py', '/dest/x.py')\n",
                      (f"cp x.py {SITE}/ops.py\n" if placed else "") + "python3 h.py\n")
    assert in_dest(plan) == ["/dest/x.py"]
    expected = [("unread", "h.py removes vllm/ops.py of the installed package, where the build placed files",
                 ("**/vllm/ops.py",))] if placed else []
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == expected


@pytest.mark.parametrize("call", ["os.mkdir(os.path.join(os.path.dirname(vllm.__file__), 'extra'))",
                                  "os.makedirs(os.path.join(os.path.dirname(vllm.__file__), 'extra', 'deep'))"])
def test_making_a_folder_in_a_package_is_no_failure_of_the_helper(call: str) -> None:
    plan = run_helper(f"import os, shutil, vllm\n{call}\nshutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert plan.notes == ()
