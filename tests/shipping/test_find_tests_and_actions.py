"""What find's tests select and what its actions do, as GNU findutils 4.9 runs them over the build's paths.

Each script was run in a temp dir with GNU find 4.9 (under bash 5.2) and gives what the reader makes of it:
``!`` of an action still acts, ``-prune`` and ``-exec`` (of a command that succeeds) are true, ``-false``
is false, ``-true`` prints nothing, ``-type`` takes a comma list, ``-name`` matches the last component of
a root written with a trailing '/', ``-delete`` never removes ``.`` or ``..`` and an rmdir of a folder
that still holds a file, a link or a file the build wrote itself fails. Where an -exec copy of two
matches lands at one place the file system's order decides, and the reader says so.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

DEEP = {"s/sub/deep/z.py": ""}
TWIN = {"s/sub/deep/y.py": ""}  # a second y.py, one folder down


@pytest.mark.parametrize(("script", "placed"), [
    # '!' negates the status only: the -delete, -prune or -exec under it still acts.
    ("cp x.py /dest/a.pyc\ncp x.py /dest/b.py\nfind /dest -name '*.pyc' ! -delete\n", ["/dest/b.py"]),
    ("find . ! \\( -name sub -prune \\) -name '*.py' -exec cp {} /dest/ \\;\n", ["/dest/x.py"]),
    ("find sub -name y.py ! -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find sub ! -type d -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    # An action on the left of '-a' acts too.
    ("cp x.py /dest/a.pyc\ncp x.py /dest/b.py\nfind /dest -name '*.pyc' -print -delete >/dev/null\n", ["/dest/b.py"]),
    ("find sub -name y.py -exec cp {} /dest/a.py \\; -exec cp {} /dest/b.py \\;\n", ["/dest/a.py", "/dest/b.py"]),
    # -true holds and prints nothing: find prints only sub/y.py, once.
    ("cp \"$(find sub -true -name y.py)\" /dest/\n", ["/dest/y.py"]),
    ("cp \"$(find sub -mindepth 1 -maxdepth 1 -xdev)\" /dest/\n", ["/dest/y.py"]),
    # -false is false: '-o' goes on to its right.
    ("find sub -false -o -name y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find sub -name y.py -false -exec cp {} /dest/ \\;\n", []),
    # -prune and -delete are true; an -exec of a command that succeeds is true.
    ("cp x.py /dest/a.pyc\nfind /dest -name a.pyc -delete -exec cp x.py /dest/after.py \\;\n", ["/dest/after.py"]),
    ("find sub -type f -prune -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find sub -name y.py -exec true \\; -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    # -type takes a comma list of kinds.
    ("find sub -type l,f -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find sub -type d,f -name y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    # -name matches the root's last component, written with a '/' or not, and a name ending in X whole.
    ("find sub/ -name sub -exec cp -r {} /dest/ \\;\n", ["/dest/sub/y.py"]),
    ("cp x.py sub/aX\nfind sub -name aX -exec cp {} /dest/ \\;\n", ["/dest/aX"]),
    ("cp x.py /dest/.X\ncp x.py /dest/b.py\nfind /dest -name .X -delete\n", ["/dest/b.py"]),
])
def test_find_selects_and_acts_as_gnu_find_does(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and plan.notes == ()


KEPT = "cd /w/s\n[ -d /dest/d ] && cp x.py /dest/kept.py\n"


@pytest.mark.parametrize(("script", "placed"), [
    # find never removes the folder it starts from as '.', './' or '..': it stays, emptied.
    ("mkdir -p /dest/d/e\ncd /dest/d\nfind . -delete\n", ["/dest/kept.py"]),
    ("mkdir -p /dest/d/e\ncd /dest/d\nfind ./ -delete\n", ["/dest/kept.py"]),
    ("mkdir -p /dest/d/e/f\ncd /dest/d/e\nfind .. -delete\n", ["/dest/kept.py"]),
    # rmdir fails on a folder that still holds a file the build wrote, or a link: both stay.
    ("mkdir /dest/d\necho hi >/dest/d/o\nfind /dest/d -type d -delete\n", ["/dest/kept.py"]),
    ("mkdir /dest/d\nln -s /w/s/x.py /dest/d/l\nfind /dest/d -type d -delete\n", ["/dest/d/l", "/dest/kept.py"]),
    ("mkdir /dest/d\nln -s /dest/none /dest/d/l\nfind /dest/d -type d -delete\n", ["/dest/kept.py"]),  # dangling
])
def test_find_delete_leaves_what_rmdir_cannot_remove(script: str, placed: list[str]) -> None:
    plan = run_script(script + KEPT)
    assert in_dest(plan) == placed


def _order_note(count: int, program: str, place: str) -> tuple[str, str]:
    return ("assumed", f"find lists {count} files that {program} puts at the same place in {place}: which is last "
                       "is the file system's order; the reader takes find's paths sorted")


@pytest.mark.parametrize(("script", "files", "notes"), [
    # Two y.py copied, moved, installed or linked into one folder: the last one stays.
    ("find sub -name y.py -exec mv {} /dest/ \\;\n", TWIN, [_order_note(2, "mv", "/dest")]),
    ("find sub -name y.py -exec install {} /dest/ \\;\n", TWIN, [_order_note(2, "install", "/dest")]),
    ("find sub -name y.py -exec ln -f {} /dest/ \\;\n", TWIN, [_order_note(2, "ln", "/dest")]),
    ("find sub -name y.py -exec cp -t /dest {} \\;\n", TWIN, [_order_note(2, "cp", "/dest")]),
    ("find sub -name y.py -exec cp x.py {} /dest/ \\;\n", TWIN, [_order_note(2, "cp", "/dest")]),
    ("find sub -name y.py -exec cp {} {}.bak \\; -exec cp {} /dest/ \\;\n", TWIN, [_order_note(2, "cp", "/dest")]),
    # Two files of different names copied onto one file: the last one stays.
    ("find sub -name '*.py' -exec cp {} /dest/one.py \\;\n", DEEP, [_order_note(2, "cp", "/dest/one.py")]),
    # Different names into a folder, each next to its own copy, or a command that puts nothing: no order.
    ("find sub -name '*.py' -exec cp {} /dest \\;\n", DEEP, []),
    ("find sub -name '*.py' -exec mkdir -p /dest/new/ \\; -exec cp {} x.py /dest/new/ \\;\n", DEEP, []),
    ("find sub -name '*.py' -exec mkdir -p /dest/new \\; -exec cp -t /dest/new {} \\;\n", DEEP, []),
    ("find sub -name y.py -exec cp {} {}.bak \\;\n", TWIN, []),
    ("find sub -name y.py -exec touch {} /dest/stamp \\;\n", TWIN, []),
])
def test_an_exec_that_puts_two_matches_at_one_place_notes_that_the_order_decides(
        script: str, files: dict[str, str], notes: list[tuple[str, str]]) -> None:
    plan = run_script(script, files=files)
    assert [(n.kind, n.reason) for n in plan.notes] == notes


def test_an_exec_copy_that_names_no_path_runs_for_each_match_with_no_order_to_note() -> None:
    # 'cp --version' twice prints the version twice; the line after it runs.
    plan = run_script("find sub -name y.py -exec cp --version \\; >/dev/null\ncp x.py /dest/after.py\n", files=TWIN)
    assert in_dest(plan) == ["/dest/after.py"] and "assumed" not in [n.kind for n in plan.notes]


# GNU find 4.9 under bash and dash: a -delete that fails ('Directory not empty', rmdir('./'), rmdir('..')) makes
# find fail (status 1) after it has done the rest; 'find . -delete' says nothing of '.' and succeeds.
@pytest.mark.parametrize(("script", "placed", "failed"), [
    ("mkdir /dest/d\ncp x.py /dest/d/\nfind /dest/d -type d -delete && cp x.py /dest/ok.py", ["/dest/d/x.py"],
     ["/dest/d"]),
    ("mkdir /dest/d\ncp x.py /dest/d/\nfind /dest/d -delete && cp x.py /dest/ok.py", ["/dest/ok.py"], []),
    ("mkdir /dest/d\ncd /dest/d\nfind ./ -delete && cp /w/s/x.py /dest/ok.py", [], ["./"]),
    ("mkdir /dest/d\ncd /dest/d\nfind . -delete && cp /w/s/x.py /dest/ok.py", ["/dest/ok.py"], []),
    ("mkdir /dest/d\ncd /dest/d\nfind .. -name .. -delete || cp /w/s/x.py /dest/f.py", ["/dest/f.py"], [".."]),
])
def test_a_delete_find_cannot_do_makes_find_fail(script: str, placed: list[str], failed: list[str]) -> None:
    plan = run_script(script + "\n")
    assert in_dest(plan) == placed
    assert [n.reason for n in plan.notes if n.text.startswith("find")] == [
        f"find cannot delete {shown}: it stays, and find fails" for shown in failed]


# GNU find 4.9: '-prune' on a starting folder keeps find out of it as well.
@pytest.mark.parametrize(("script", "placed"), [
    ("find sub -name sub -prune -o -exec cp {} /dest/ \\;", []),
    ("find sub -prune -o -type f -exec cp {} /dest/ \\;", []),
    ("v=$(find sub -prune)\ncp x.py \"/dest/a$v\"", ["/dest/asub"]),
])
def test_a_pruned_starting_folder_is_not_walked(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script + "\n")) == placed
