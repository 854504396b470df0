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

from patcher.shipping import ShipPlan
from tests.shipping.conftest import in_dest, run_script


def _helper(code: str) -> ShipPlan:
    return run_script("python3 h.py\n", files={"s/h.py": code})


def _notes(plan: ShipPlan) -> list[tuple[str, str, int, str]]:
    return [(n.kind, n.file, n.line, n.reason) for n in plan.notes]


def test_a_copy_of_nothing_in_a_function_is_noted_and_the_program_goes_on() -> None:
    plan = _helper("import shutil\n"
                   "def unused():\n"
                   "    shutil.copy('missing.py', 'sub/y.py')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert plan.image["/w/s/sub/y.py"].source == "s/sub/y.py"
    # Only the failure: the file the build placed at the destination is not taken to be rewritten.
    assert _notes(plan) == [("fails", "s/i.sh", 1,
                             "h.py cannot copy /w/s/missing.py: nothing is there (FileNotFoundError)")]


def test_a_copyfile_of_a_folder_in_a_function_is_noted_and_places_nothing() -> None:
    plan = _helper("import shutil\n"
                   "def unused():\n"
                   "    shutil.copyfile('sub', '/dest/sub')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert _notes(plan) == [("fails", "s/i.sh", 1, "h.py cannot copyfile /w/s/sub: it is a folder")]


def test_a_copytree_onto_a_folder_in_a_function_is_noted_and_places_nothing() -> None:
    plan = _helper("import shutil\n"
                   "def unused():\n"
                   "    shutil.copytree('sub', '/dest')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert _notes(plan) == [("fails", "s/i.sh", 1,
                             "h.py cannot copytree to /dest: a folder or file stands there")]


def test_a_copy_into_a_missing_folder_in_a_function_fails_there_and_the_program_goes_on() -> None:
    plan = _helper("import shutil\n"
                   "def unused():\n"
                   "    shutil.copy('x.py', '/dest/missing/x.py')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert _notes(plan) == [
        ("fails", "s/i.sh", 1, "h.py cannot create /dest/missing/x.py: /dest/missing is not a folder at this point "
                               "of the build"),
        ("assumed", "s/i.sh", 1, "h.py copies /w/s/x.py to /dest/missing/x.py in code that may not run (a "
                                 "function, a loop, a condition): the reader takes it to run once"),
    ]


def test_a_link_onto_a_file_in_a_function_is_noted_and_leaves_the_file() -> None:
    plan = _helper("import os, shutil\n"
                   "def unused():\n"
                   "    os.symlink('x.py', 'sub/y.py')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert plan.image["/w/s/sub/y.py"].source == "s/sub/y.py"
    assert _notes(plan) == [("fails", "s/i.sh", 1,
                             "h.py cannot make the link /w/s/sub/y.py: something stands there (FileExistsError)")]


def test_a_hard_link_to_nothing_in_a_function_is_noted_and_the_program_goes_on() -> None:
    plan = _helper("import os, shutil\n"
                   "def unused():\n"
                   "    os.link('missing.py', '/dest/l.py')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert _notes(plan) == [
        ("fails", "s/i.sh", 1, "/w/s/missing.py does not exist at this point of the build, so nothing is copied"),
        ("assumed", "s/i.sh", 1, "h.py links /dest/l.py to /w/s/missing.py in code that may not run (a function, "
                                 "a loop, a condition): the reader takes it to run once"),
    ]


def test_a_link_in_a_function_is_made_and_noted_as_assumed() -> None:
    plan = _helper("import os, shutil\n"
                   "def unused():\n"
                   "    os.symlink('/w/s/x.py', '/dest/l.py')\n"
                   "shutil.copy('x.py', '/dest/x.py')\n")
    assert {path: plan.image[path].source for path in in_dest(plan)} == {"/dest/l.py": "s/x.py",
                                                                         "/dest/x.py": "s/x.py"}
    assert _notes(plan) == [("assumed", "s/i.sh", 1, "h.py links /dest/l.py to /w/s/x.py in code that may not run "
                                                     "(a function, a loop, a condition): the reader takes it to run "
                                                     "once")]


def test_a_stored_rename_called_under_a_condition_is_noted_as_assumed() -> None:
    # 'mv = Path(F).rename' bound once, called in an 'if': the call is the method's, in code that may not run.
    plan = _helper("import sys\n"
                   "from pathlib import Path\n"
                   "mv = Path('x.py').rename\n"
                   "if len(sys.argv) > 5:\n"
                   "    mv('/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert _notes(plan) == [("assumed", "s/i.sh", 1, "h.py copies /w/s/x.py to /dest/x.py in code that may not run "
                                                     "(a function, a loop, a condition): the reader takes it to run "
                                                     "once")]


def test_a_stored_rename_called_at_the_top_level_is_certain() -> None:
    plan = _helper("from pathlib import Path\n"
                   "mv = Path('x.py').rename\n"
                   "mv('/dest/x.py')\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert "/w/s/x.py" not in plan.image
    assert _notes(plan) == []
