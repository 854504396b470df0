"""A Python helper's copy, link or move in code that may not run (a function, a loop, an ``if``).

Pins what the reader makes of such a call where CPython would raise if it
ran (nothing to copy, a folder where a file is wanted, a folder or file
already at the destination, no folder to put it in): the failure is noted,
the call places nothing, and, as the call may never run, the program goes on
to what follows it. A call there that works is placed all the same, noted as
the reader's assumption (``assumed``). Each helper below was run under
CPython 3.11 in a copy of the tree: its function is never called, so only its
top-level copy of x.py to /dest/x.py happens, and it ends with 0.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_by_file, run_helper


ASSUMED = "in code that may not run (a function, a loop, a condition): the reader takes it to run once"


@pytest.mark.parametrize(("call", "placed", "found"), [
    pytest.param("shutil.copy('missing.py', 'sub/y.py')", {},
                 # Only the failure: the file the build placed at the destination is not taken to be rewritten.
                 [("fails", "h.py cannot copy /w/s/missing.py: nothing is there (FileNotFoundError)")],
                 id="copy-of-nothing"),
    pytest.param("shutil.copyfile('sub', '/dest/sub')", {},
                 [("fails", "h.py cannot copyfile /w/s/sub: it is a folder")], id="copyfile-of-a-folder"),
    pytest.param("shutil.copytree('sub', '/dest')", {},
                 [("fails", "h.py cannot copytree to /dest: a folder or file stands there")],
                 id="copytree-onto-a-folder"),
    pytest.param("shutil.copy('x.py', '/dest/missing/x.py')", {},
                 [("fails", "h.py cannot create /dest/missing/x.py: /dest/missing is not a folder at this point of the "
                            "build"),
                  ("assumed", f"h.py copies /w/s/x.py to /dest/missing/x.py {ASSUMED}")],
                 id="copy-into-a-missing-folder"),
    pytest.param("os.symlink('x.py', 'sub/y.py')", {},
                 [("fails", "h.py cannot make the link /w/s/sub/y.py: something stands there (FileExistsError)")],
                 id="link-onto-a-file"),
    pytest.param("os.link('missing.py', '/dest/l.py')", {},
                 [("fails", "/w/s/missing.py does not exist at this point of the build, so nothing is copied"),
                  ("assumed", f"h.py links /dest/l.py to /w/s/missing.py {ASSUMED}")],
                 id="hard-link-to-nothing"),
    pytest.param("os.symlink('/w/s/x.py', '/dest/l.py')", {"/dest/l.py": "s/x.py"},
                 [("assumed", f"h.py links /dest/l.py to /w/s/x.py {ASSUMED}")], id="link-that-works"),
])
def test_a_call_in_a_function_is_noted_and_the_program_goes_on(call: str, placed: dict[str, str],
                                                              found: list[tuple[str, str]]) -> None:
    plan = run_helper(f"import os, shutil\ndef unused():\n    {call}\nshutil.copy('x.py', '/dest/x.py')\n")
    assert {path: plan.image[path].source for path in in_dest(plan)} == {**placed, "/dest/x.py": "s/x.py"}
    assert plan.image["/w/s/sub/y.py"].source == "s/sub/y.py"  # what the build placed stays
    assert notes_by_file(plan) == [(kind, "s/i.sh", 1, reason) for kind, reason in found]


def test_a_stored_rename_called_under_a_condition_is_noted_as_assumed() -> None:
    # 'mv = Path(F).rename' bound once, called in an 'if': the call is the method's, in code that may not run.
    plan = run_helper("import sys\n"
                      "from pathlib import Path\n"
                      "mv = Path('x.py').rename\n"
                      "if len(sys.argv) > 5:\n"
                      "    mv('/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert notes_by_file(plan) == [("assumed", "s/i.sh", 1, "h.py copies /w/s/x.py to /dest/x.py in code that may not run "
                                                     "(a function, a loop, a condition): the reader takes it to run "
                                                     "once")]


def test_a_stored_rename_called_at_the_top_level_is_certain() -> None:
    plan = run_helper("from pathlib import Path\n"
                      "mv = Path('x.py').rename\n"
                      "mv('/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert "/w/s/x.py" not in plan.image
    assert notes_by_file(plan) == []
