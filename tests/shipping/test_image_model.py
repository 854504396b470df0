"""The model of the image: which context file sits at which path, and what the build knows is (not) there.

A folder the build made where nothing could stand, or made with ``mkdir``
without ``-p``, is owned: a path under it the build did not write is absent.
A removed path is absent until written again. Under a file nothing can be.
Anywhere else a path the build did not touch is the base image's to decide.
"""

from __future__ import annotations

import pytest

from patcher.shipping.image_fs import ImageFS, Kind, Placement, Step, normalise, under

PLACED = Placement("ctx/a.py", (Step("Dockerfile", 2, "COPY"),), 1)


@pytest.mark.parametrize(("path", "normal"), [
    ("", "/"), ("/", "/"), ("a/b", "/a/b"), ("//a//b/", "/a/b"), ("/a/./b/../c", "/a/c"), ("/..", "/"), ("///x", "/x"),
    # Blanks are part of a name, at its start too (a quoted COPY destination keeps them).
    (" a/ b ", "/ a/ b "), ("/ /x", "/ /x"), ("\ta", "/\ta"),
])
def test_normalise_keeps_names_and_drops_only_dots_and_extra_slashes(path: str, normal: str) -> None:
    assert normalise(path) == normal


@pytest.mark.parametrize(("path", "folder", "inside"), [
    ("/a/b", "/a", True), ("/a", "/a", True), ("/ab", "/a", False), ("/a/b", "/a/", True), ("/x", "/", True),
    ("/", "/a", False),
])
def test_under_is_on_path_component_boundaries(path: str, folder: str, inside: bool) -> None:
    assert under(path, folder) is inside


def test_what_stands_where() -> None:
    fs = ImageFS()
    fs.place("/opt/app/a.py", PLACED)
    fs.write_other("/etc/conf")
    fs.make_dir("/srv")
    assert [fs.kind(p) for p in ["/opt/app/a.py", "/etc/conf", "/opt/app", "/opt", "/", "/srv", "/etc"]] == [
        Kind.FILE, Kind.FILE, Kind.DIR, Kind.DIR, Kind.DIR, Kind.DIR, Kind.DIR]
    assert fs.kind("/opt/app/a.py/x") is Kind.ABSENT and fs.kind("/etc/conf/x/y") is Kind.ABSENT
    assert fs.kind("/opt/app/b.py") is Kind.UNKNOWN and fs.kind("/usr/lib") is Kind.UNKNOWN
    assert fs.kind("/opt/app/./a.py/") is Kind.FILE


def test_a_folder_made_where_nothing_could_be_is_owned() -> None:
    fs = ImageFS()
    fs.write_other("/f")
    fs.make_dir("/new", new=True)
    fs.make_dir("/maybe")
    assert fs.kind("/new/x") is Kind.ABSENT and fs.kind("/maybe/x") is Kind.UNKNOWN
    fs.remove("/f")
    fs.make_dir("/f/d/e")  # /f was removed: nothing stood there
    assert fs.kind("/f/x") is Kind.ABSENT and fs.kind("/f/d/x") is Kind.ABSENT and fs.kind("/f/d/e/x") is Kind.ABSENT
    fs.make_dir("/maybe", new=True)  # already there: not made now
    assert fs.kind("/maybe/x") is Kind.UNKNOWN


def test_a_removed_path_is_absent_until_written_again() -> None:
    fs = ImageFS()
    fs.place("/a/b/c.py", PLACED)
    fs.place("/a/bc.py", PLACED)
    fs.write_other("/a/b/o")
    assert fs.remove("/a/b") == ["/a/b/c.py"]
    assert sorted(fs.files) == ["/a/bc.py"] and "/a/b/o" not in fs.others
    assert fs.kind("/a/b") is Kind.ABSENT and fs.kind("/a/b/x/y") is Kind.ABSENT and fs.kind("/a") is Kind.DIR
    fs.place("/a/b/x/n.py", PLACED)
    assert fs.kind("/a/b") is Kind.DIR and fs.kind("/a/b/x") is Kind.DIR and fs.kind("/a/b/other") is Kind.ABSENT
    fs.remove("/")
    assert fs.files == {} and "/" in fs.dirs and fs.kind("/") is Kind.DIR


def test_writing_replaces_what_stood_there() -> None:
    fs = ImageFS()
    fs.place("/x.py", PLACED)
    fs.write_other("/x.py")
    assert "/x.py" not in fs.files and "/x.py" in fs.others
    fs.place("/x.py", PLACED)
    assert "/x.py" in fs.files and "/x.py" not in fs.others


def test_a_placement_records_where_its_last_step_put_it() -> None:
    fs = ImageFS()
    fs.place("a//b.py", PLACED)
    assert fs.files["/a/b.py"].steps[-1].path == "/a/b.py"
    moved = Placement("ctx/a.py", (*fs.files["/a/b.py"].steps, Step("s.sh", 3, "cp")), 5)
    fs.place("/c.py", moved)
    assert [s.path for s in fs.files["/c.py"].steps] == ["/a/b.py", "/c.py"]
    fs.place("/d.py", Placement("ctx/a.py", (), 6))
    assert fs.files["/d.py"].steps == ()


def test_below_lists_the_files_inside_a_folder_sorted() -> None:
    fs = ImageFS()
    for path in ["/p/z.py", "/p/a/b.py", "/p", "/pq/x.py"]:
        fs.place(path, PLACED) if path != "/p" else None
    assert [p for p, _ in fs.below("/p/")] == ["/p/a/b.py", "/p/z.py"]
    assert [p for p, _ in fs.below("/p/z.py")] == []
    assert [p for p, _ in fs.below("/")] == ["/p/a/b.py", "/p/z.py", "/pq/x.py"]


def test_names_and_an_independent_copy() -> None:
    fs = ImageFS()
    fs.place("/a/b.py", PLACED)
    fs.write_other("/c")
    fs.make_dir("/d", new=True)
    fs.remove("/e")
    assert fs.names() == ["/", "/a", "/a/b.py", "/c", "/d"]
    other = fs.copy()
    other.place("/x.py", PLACED)
    other.write_other("/y")
    other.make_dir("/z", new=True)
    other.remove("/a")
    assert fs.names() == ["/", "/a", "/a/b.py", "/c", "/d"] and fs.kind("/e") is Kind.ABSENT
    assert other.names() == ["/", "/c", "/d", "/x.py", "/y", "/z"] and other.kind("/d/q") is Kind.ABSENT
    assert fs.kind("/z/q") is Kind.UNKNOWN and other.kind("/e") is Kind.ABSENT


def test_a_step_says_whether_a_shell_command_made_it() -> None:
    assert not Step("Dockerfile", 1, "COPY").in_script and not Step("Dockerfile", 1, "ADD").in_script
    assert Step("s.sh", 1, "cp").in_script and Step("Dockerfile", 1, "RUN --mount").in_script


def _tree_with_links() -> ImageFS:
    fs = ImageFS()
    fs.make_dir("/b", new=True)
    placed = Placement("s/x.py", (), 0)
    for path in ("/b/a/x.py", "/b/a/y.py", "/b/c/z.py", "/b/d/w.py", "/t/u.py"):
        fs.place(path, placed)
    fs.write_other("/b/c/o.txt")
    fs.links["/b/l"] = "/t"  # shows /t/u.py at /b/l/u.py
    fs.place("/b/l/u.py", placed)
    fs.links["/m"] = "/b/d"  # /b/d is shown at /m
    fs.place("/m/w.py", placed)
    return fs


@pytest.mark.parametrize("paths", [["/b/a/x.py", "/b/c"], ["/b/a", "/b/l"], ["/b/d/w.py", "/b/a/y.py"], ["/t"],
                                   ["/b/d", "/b/c/o.txt"], ["/"]])
def test_removing_several_paths_at_once_is_removing_each_in_turn(paths: list[str]) -> None:
    together, in_turn = _tree_with_links(), _tree_with_links()
    removed = together.remove_all(paths)
    one_by_one = [p for path in paths for p in in_turn.remove(path)]
    assert sorted(removed) == sorted(one_by_one)
    assert (together.files, together.others, together.dirs, together.links, together.owned, together.gone) == (
        in_turn.files, in_turn.others, in_turn.dirs, in_turn.links, in_turn.owned, in_turn.gone)


def test_a_path_is_made_by_the_build_where_it_or_a_folder_above_it_was() -> None:
    fs = ImageFS()
    fs.make_dir("/w/s", new=True)  # /w may be the base image's
    assert fs.made("/w/s") and fs.made("/w/s/x/y.py") and not fs.made("/w") and not fs.made("/usr/lib")


def test_removing_a_folder_a_link_shows_returns_what_went_at_every_path_it_was_shown() -> None:
    fs = _tree_with_links()  # /m shows /b/d
    assert sorted(fs.remove("/b/d")) == ["/b/d/w.py", "/m/w.py"]
