"""Where a Python helper's top-level copy, folder, link or rename lands, and when CPython raises there.

Pins: ``os.makedirs`` onto a file raises FileExistsError even with
``exist_ok=True``; ``os.link`` of a file that is not there raises
FileNotFoundError; either ends the program (status 1) before its later
copies, and the RUN fails. A ``copytree`` to a path of the base image is
placed but noted, as only the base image says whether a folder stands there.
A link whose target the reader cannot work out, written through by a later
copy, leaves that path unread. ``os.rename`` of a base image's file takes it
away: a later ``test -e`` of it is false. Each helper was run under CPython
3.11 in a copy of the tree, with the results said at each test.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_by_file, run_helper

RUN_FAILS = ("fails", "Dockerfile", 4, "this RUN fails as the reader follows it, so 'docker build' stops here "
                                       "(see the failures noted before it)")


def test_makedirs_onto_a_file_raises_even_with_exist_ok_and_ends_the_helper() -> None:
    # CPython 3.11: FileExistsError: [Errno 17] File exists: 'x.py'; status 1, /dest stays empty.
    plan = run_helper("import os, shutil\n"
                      "os.makedirs('x.py', exist_ok=True)\n"
                      "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == []
    assert plan.image["/w/s/x.py"].source == "s/x.py"
    assert notes_by_file(plan) == [
        ("fails", "s/i.sh", 1, "h.py cannot make the folder /w/s/x.py: a file stands there (FileExistsError)"),
        RUN_FAILS,
    ]


def test_a_hard_link_to_a_file_that_is_not_there_raises_and_ends_the_helper() -> None:
    # CPython 3.11: FileNotFoundError: [Errno 2] No such file or directory: 'missing.py' -> '/dest/l.py'; status 1.
    plan = run_helper("import os, shutil\n"
                      "os.link('missing.py', '/dest/l.py')\n"
                      "shutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == []
    assert notes_by_file(plan) == [
        ("fails", "s/i.sh", 1, "/w/s/missing.py does not exist at this point of the build, so nothing is copied"),
        RUN_FAILS,
    ]


def test_a_copytree_to_a_path_of_the_base_image_is_placed_and_noted() -> None:
    # CPython 3.11, /opt/pkg not there: /opt/pkg/y.py made, status 0. Where the base image has /opt/pkg, it raises.
    plan = run_helper("import shutil\nshutil.copytree('sub', '/opt/pkg')\n")
    assert plan.image["/opt/pkg/y.py"].source == "s/sub/y.py"
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py copies /w/s/sub to /opt/pkg only if nothing may stand there in the base image",
         ("/opt/pkg",))]


def test_a_copy_through_a_link_to_a_target_the_reader_cannot_work_out_is_unread() -> None:
    # CPython 3.11: /dest/l is a link to 'a', and the copy writes x.py's bytes to /dest/a through it.
    plan = run_helper("import shutil\n"
                      "from pathlib import Path\n"
                      "for t in ['a']:\n"
                      "    Path('/dest/l').symlink_to(t)\n"
                      "shutil.copy('x.py', '/dest/l')\n")
    assert in_dest(plan) == ["/dest/l"]
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py rewrites /dest/l, which the build placed there", ("/dest/l",))]


def test_a_rename_of_a_base_image_file_takes_it_away() -> None:
    # CPython 3.11 and bash 5.2: /opt/base.txt becomes /opt/moved.txt, so 'test -e' fails and the cp runs.
    plan = run_helper("import os\nos.rename('/opt/base.txt', '/opt/moved.txt')\n",
                      "python3 h.py\ntest -e /opt/base.txt || cp x.py /dest/\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert notes_by_file(plan) == []


@pytest.mark.parametrize("source", ["/etc/hostname", "x.py"])
def test_a_copy_to_an_empty_path_raises_and_ends_the_helper(source: str) -> None:
    # CPython 3.11: shutil.copy(SRC, '') opens '' to write: FileNotFoundError: [Errno 2] No such file or
    # directory: ''; status 1, and the copy after it never runs.
    plan = run_helper(f"import shutil\nshutil.copy({source!r}, '')\nshutil.copy('x.py', '/dest/x.py')\n")
    assert in_dest(plan) == []
    assert RUN_FAILS in notes_by_file(plan)
