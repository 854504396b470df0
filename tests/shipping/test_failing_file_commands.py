"""A file command that coreutils would fail is noted as failing, with why, and copies nothing.

The script goes on after it (no ``set -e`` here), but as the last command
of the RUN its failure would stop ``docker build``: the RUN line gets its
own note. What fails is what GNU coreutils refuse: a source that is not
there, a folder without ``-r``, a copy into a file or into itself, a
missing operand, ``rm`` of a folder without ``-r`` or of nothing without
``-f``, ``mkdir`` of what exists (without ``-p``), ``touch`` or a redirection
into a folder that is not there (sh then does not run the command).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, plan_of, run_script, script_context

RUN_FAILS = ("fails", 4, "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures "
                         "noted before it)")


@pytest.mark.parametrize(("command", "reason"), [
    ("cp nothere.py /made/", "/w/s/nothere.py does not exist at this point of the build, so nothing is copied"),
    ("cp sub /made/", "/w/s/sub is a folder and cp was not told to copy folders (-r), so it copies nothing from it"),
    ("install sub /made/", "/w/s/sub is a folder and install does not copy folders, so it copies nothing from it"),
    ("rsync sub /made/", "rsync skips the folder /w/s/sub without -r or -a"),
    ("cp -t /made/x.py x.py", "/made/x.py is not a folder, so nothing is copied into it"),
    ("cp -t /made/none x.py", "/made/none is not a folder, so nothing is copied into it"),
    ("cp x.py sub/y.py /made/x.py", "/made/x.py is not a folder, so nothing is copied into it"),
    ("cp x.py /made/x.py/", "/made/x.py/ is not a folder, so the copy fails"),
    ("cp x.py /made/none/", "/made/none/ is not a folder, so the copy fails"),
    ("cp -r sub sub/deep/", "cannot copy the folder /w/s/sub into itself"),
    ("cp -r sub sub", "cannot copy the folder /w/s/sub into itself"),
    # GNU: "'x.py' and 'x.py' are the same file", through a link to it as well (mv replaces the link itself).
    ("cp x.py .", "cp: /w/s/x.py and /w/s/x.py are the same file, so nothing is copied"),
    ("mv x.py x.py", "mv: /w/s/x.py and /w/s/x.py are the same file, so nothing is copied"),
    ("install x.py ./", "install: /w/s/x.py and /w/s/x.py are the same file, so nothing is copied"),
    ("cp -r sub/. sub", "cp: /w/s/sub and /w/s/sub are the same file, so nothing is copied"),
    ("cp x.py", "cp needs a source and a destination"),
    ("cp", "cp needs a source and a destination"),
    ("install x.py", "install needs a source and a destination"),
    ("mv x.py", "mv needs a source and a destination"),
    ("ln", "ln needs a target"),
    ("rsync x.py", "rsync needs a source and a destination"),
    ("rm /made", "/made is a folder and rm was not told -r, so it stays"),
    ("rm nothere", "/w/s/nothere does not exist, so rm fails (without -f)"),
    # GNU rm refuses '/' under -r (--preserve-root is its default) and any '.' or '..' operand, and removes nothing.
    ("rm -rf /", "rm refuses to work recursively on '/' (/) without --no-preserve-root"),
    ("rm -r --force //", "rm refuses to work recursively on '/' (//) without --no-preserve-root"),
    ("rm -rf --preserve-root=all /", "rm refuses to work recursively on '/' (/) without --no-preserve-root"),
    ("rm -rf .", "rm refuses to remove '.' or '..' (.): it stays"),
    ("rm -rf /made/..", "rm refuses to remove '.' or '..' (/made/..): it stays"),
    ("rm -rf /made/./", "rm refuses to remove '.' or '..' (/made/./): it stays"),
    ("mkdir /made", "/made already exists, so mkdir fails (without -p)"),
    ("mkdir x.py", "/w/s/x.py already exists, so mkdir fails (without -p)"),
    ("mkdir -p x.py", "/w/s/x.py is a file, so mkdir -p fails"),
    ("mkdir -p x.py/a/b", "/w/s/x.py is a file, so mkdir cannot make /w/s/x.py/a/b"),  # GNU: "Not a directory"
    ("mkdir x.py/a", "/w/s/x.py is a file, so mkdir cannot make /w/s/x.py/a"),
    # GNU mkdir 9.1: "cannot create directory '/made/q/r': No such file or directory"; -p makes /made/q first.
    ("mkdir /made/q/r", "/made/q does not exist, so mkdir cannot make /made/q/r (without -p)"),
    ("mkdir /made/a /made/q/r", "/made/q does not exist, so mkdir cannot make /made/q/r (without -p)"),
    ("rm x.py/", "x.py/ names a folder, and /w/s/x.py is a file, so rm fails"),
    ("install -d x.py/a", "/w/s/x.py is a file, so install -d cannot make /w/s/x.py/a"),
    ("install -d /made x.py", "/w/s/x.py is a file, so install -d cannot make /w/s/x.py"),
    # GNU install 9.1: "cannot create regular file 'q/': Not a directory": -D makes the folders above DEST only.
    ("install -D x.py /made/q/", "/made/q is not a folder, and install -D makes only the folders above it, so "
                                 "nothing is installed"),
    ("cp --parents x.py /made/a", "/made/a is not a folder: with --parents, cp copies nothing"),
    ("cp -T x.py /made/a/", "/made/a/ names a folder, and -T copies the file /w/s/x.py as it, so the copy fails"),
    ("cp -tDIR x.py", "/w/s/DIR is not a folder, so nothing is copied into it"),
    ("touch /made/none/t.py", "touch cannot create /made/none/t.py: /made/none is not a folder at this point of "
                              "the build"),
    ("touch x.py/t", "touch cannot create /w/s/x.py/t: /w/s/x.py is not a folder at this point of the build"),
    # cp, mv, install and ln make no folders: the folder a copy lands in must be there (GNU coreutils 9.1).
    ("cp x.py /made/none/a.py", "cp cannot create /made/none/a.py: /made/none is not a folder at this point of "
                                "the build"),
    ("cp -r sub /made/none/s", "cp cannot create /made/none/s: /made/none is not a folder at this point of the build"),
    ("cp -r sub/. /made/none/s", "cp cannot create /made/none/s: /made/none is not a folder at this point of "
                                 "the build"),
    ("mv x.py /made/none/a.py", "mv cannot create /made/none/a.py: /made/none is not a folder at this point of "
                                "the build"),
    ("install -m 644 x.py /made/none/a.py", "install cannot create /made/none/a.py: /made/none is not a folder at "
                                            "this point of the build"),
    ("ln -s /w/s/x.py /made/none/a.py", "ln cannot create /made/none/a.py: /made/none is not a folder at this point "
                                        "of the build"),
    ("cp x.py /w/s/x.py/a.py", "cp cannot create /w/s/x.py/a.py: /w/s/x.py is not a folder at this point of the "
                               "build"),
    # sh cannot open the file, so it does not run the command, which fails.
    ("echo done > /made/none/log", "the redirection cannot create /made/none/log: /made/none is not a folder at "
                                   "this point of the build"),
])
def test_a_file_command_coreutils_would_fail_is_noted(command: str, reason: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("fails", 2, command, reason), (RUN_FAILS[0], RUN_FAILS[1], "RUN cd /w/s && ./i.sh", RUN_FAILS[2])]
    assert not any(path.startswith("/made/") for path in plan.image)


@pytest.mark.parametrize("command", ["rm -f nothere", "rm -rf /made/none", "mkdir -p /made", "rm -r /made",
                                     "rm --force --recursive /made", "mkdir -p /made/a /made/a", "touch /made/t",
                                     # the file touch made is there for the next command
                                     "touch /made/.installed\nrm /made/.installed",
                                     "touch /made/__init__.py\ncp /made/__init__.py /made/empty.py",
                                     # GNU rm -f takes a file named as a folder for one that is not there
                                     "rm -f x.py/", "rm -rf x.py/"])
def test_what_coreutils_allow_is_not_a_failure(command: str) -> None:
    assert plan_of(script_context(f"mkdir /made\n{command}\n")).notes == ()


@pytest.mark.parametrize(("command", "kept"), [
    ("rm -rf / /made/b.py", ["/made/a.py"]),  # rm refuses '/' and goes on to the next operand
    ("ln -s / /made/root\nrm -rf /made/root/", ["/made/a.py", "/made/b.py"]),  # a link to '/' with a slash is '/'
    ("ln -s / /made/root\nrm -rf /made/root", ["/made/a.py", "/made/b.py"]),  # without one, the link goes
    ("cd /made\nrm -rf . ./", ["/made/a.py", "/made/b.py"]),
    ("rm -rf --no-preserve-root /", []),
    ("rm -f /made/a.py/ /made/b.py/", ["/made/a.py", "/made/b.py"]),  # a file named as a folder stays
])
def test_rm_keeps_the_root_the_dot_folders_and_the_files_it_refuses(command: str, kept: list[str]) -> None:
    plan = plan_of(script_context(f"mkdir /made\ncp x.py /made/a.py\ncp x.py /made/b.py\n{command}\n"))
    assert sorted(path for path in plan.image if path.startswith("/made/")) == kept


@pytest.mark.parametrize(("command", "kept"), [
    ("mv x.py x.py\ncp x.py /made/", ["/made/x.py"]),  # the file stays where it was
    ("ln -s x.py L\ncp x.py L || cp x.py /made/failed", ["/made/failed"]),  # cp writes through the link: refused
    ("ln -s x.py L\nmv x.py L && cp L /made/", ["/made/L"]),  # mv and install replace the link itself
    ("ln -s x.py L\ninstall x.py L && cp L /made/", ["/made/L"]),
])
def test_a_copy_onto_its_own_source_keeps_it(command: str, kept: list[str]) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert sorted(path for path in plan.image if path.startswith("/made/")) == kept


def test_the_script_goes_on_after_a_failed_copy() -> None:
    plan = plan_of(script_context("cp sub /made/\ncp nothere.py /made/\ncp x.py /made/\n"))
    assert plan.image["/made/x.py"].source == "s/x.py"
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1), ("fails", 2)]


# GNU coreutils 9.1 report the source they refuse (status 1) and go on to the next one.
@pytest.mark.parametrize(("command", "copied"), [
    ("cp -r nothere.py sub x.py /made/", {"/made/sub/y.py", "/made/x.py"}),
    ("cp -r sub x.py sub/deep/", {"/w/s/sub/deep/x.py"}),  # "cannot copy a directory, 'sub', into itself"
    ("ln sub x.py /made/", {"/made/x.py"}),  # "sub: hard link not allowed for directory"
    ("touch t; cp nothere.py t x.py /made/", {"/made/x.py"}),  # t, a file the build wrote, is copied too
    ("ln -s /w/s/sub/y.py /made/l; mkdir /made/d; mv nothere.py /made/l x.py /made/d/",  # the link moves as a link
     {"/made/d/l", "/made/d/x.py"}),
    # a folder holding a link copies after the failed source, and cp still fails
    ("mkdir src; ln -s /w/s/x.py src/l; cp -r nothere.py src /made/", {"/made/src/l"}),
])
def test_one_failed_source_of_several_does_not_stop_the_others(command: str, copied: set[str]) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert copied <= set(plan.image)
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 2), ("fails", 4)]


@pytest.mark.parametrize(("command", "why"), [
    ("cp --attributes-only x.py /made/", "cp with --attributes-only"),
    ("cp -X x.py /made/", "cp with -X"),
    ("cp -Xy x.py /made/", "cp with -X, -y"),
    ("cp --target-directory", "cp with --target-directory"),
    ("cp -t", "cp with -t"),
    ("cp --preserve=mode --bogus=1 x.py /made/", "cp with --bogus=1"),
    ("mv --parents x.py /made/", "mv with --parents"),
    ("mv -r x.py /made/", "mv with -r"),
    ("install --bogus x.py /made/", "install with --bogus"),
    ("install -m", "install with -m"),
    ("ln --relative -s --bogus x.py /made/", "ln with --bogus"),
    ("ln -sq x.py /made/", "ln with -q"),
    ("rsync -a --exclude='*.pyc' sub /made/", "rsync with --exclude=*.pyc"),
    ("rsync -n x.py /made/", "rsync with --update/--dry-run"),
    ("rsync --update x.py /made/", "rsync with --update/--dry-run"),
    ("rsync -u x.py /made/", "rsync with --update/--dry-run"),
])
def test_an_option_that_changes_where_files_land_and_is_not_known_is_unread(command: str, why: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert [(n.kind, n.line, n.text, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 2, command, f"{why}, which the reader does not follow", None)]
    assert not any(path.startswith("/made/") for path in plan.image)


def test_rm_with_options_the_reader_does_not_know_names_each_and_is_unread_on_what_it_names() -> None:
    # GNU rm 9.1: "invalid option -- 'X'"; it removes nothing.
    plan = plan_of(script_context("mkdir /made\ncp x.py /made/x.py\nrm -fXy /made/x.py\n"))
    assert [(n.kind, n.line, n.text, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 3, "rm -fXy /made/x.py", "rm with -X, -y, which the reader does not follow", ("/made/x.py",))]
    assert plan.image["/made/x.py"].source == "s/x.py"


@pytest.mark.parametrize(("command", "reason", "scope"), [
    ("cp -r /usr/lib/a /made/", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/a",)),
    ("cp -r /usr/lib/a /made/b", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/b",)),
    ("mv /usr/lib/a /made/b", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/b",)),
    # rsync: SRC/ fills DEST with what SRC holds; SRC lands in DEST as DEST/SRC, or is DEST itself if it is a file.
    ("rsync -a /usr/lib/a /made/", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/a",)),
    ("rsync -a /usr/lib/a /made", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/a",)),
    ("rsync -a /usr/lib/a/ /made/b", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/b",)),
    ("rsync -r /usr/lib/a /made/b", "copies /usr/lib/a from the base image, which the reader cannot see", ("/made/b",)),
    ("rsync -a --delete /usr/lib/a/ /made/b/", "copies /usr/lib/a from the base image, which the reader cannot see, "
                                              "and --delete could remove what /made/b holds that it does not",
     ("/made/b",)),
])
def test_a_folder_of_the_base_image_copied_over_the_build_is_unread(command: str, reason: str,
                                                                   scope: tuple[str, ...]) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [("unread", 2, reason, scope)]


@pytest.mark.parametrize("command", ["cp -a /usr/lib/vllm/. /opt/vllm/", "cp -a /usr/lib/vllm /opt/",
                                     "rsync -a /usr/lib/vllm/ /opt/vllm/", "rsync -a /usr/lib/vllm /opt/",
                                     "rsync -a --delete /usr/lib/vllm/ /opt/vllm/", "rsync -av /usr/lib/vllm /opt"])
def test_a_base_image_folder_copied_over_a_placed_file_is_a_caveat_on_it_not_a_removal(command: str) -> None:
    plan = plan_of(script_context(f"mkdir -p /opt/vllm\ncp x.py /opt/vllm/x.py\ncp x.py /opt/kept.py\n{command}\n"))
    assert plan.image["/opt/vllm/x.py"].source == "s/x.py"  # it may still be there: the base image decides
    assert [n.line for n in plan.caveats("s/x.py", ("/opt/vllm/x.py",))] == [4]
    assert plan.caveats("s/x.py", ("/opt/kept.py",)) == ()  # nothing beside what it could reach


def test_a_base_image_file_copied_over_a_placed_file_replaces_it() -> None:
    plan = plan_of(script_context("mkdir /made\ncp x.py /made/a.py\ncp /usr/lib/a.py /made/a.py\n"
                                  "ln -sf /usr/lib/b.py /made/b.py\n"))
    assert not any(path.startswith("/made/") for path in plan.image) and plan.notes == ()


def test_a_command_whose_output_file_cannot_be_opened_does_not_run() -> None:
    plan = plan_of(script_context("mkdir /made\n{ cp x.py /made/x.py; } > /made/none/log || cp x.py /made/or.py\n"))
    assert sorted(path for path in plan.image if path.startswith("/made/")) == ["/made/or.py"]


@pytest.mark.parametrize(("script", "reason"), [
    # GNU coreutils 9.1: "cannot overwrite directory '/dest' with non-directory"
    ("mkdir -p /d\ncp -T x.py /d", "cp cannot write the file /w/s/x.py over the folder /d"),
    ("mkdir -p /d\nmv -T x.py /d", "mv cannot write the file /w/s/x.py over the folder /d"),
    ("mkdir -p /d\ninstall -T x.py /d", "install cannot write the file /w/s/x.py over the folder /d"),
    ("mkdir -p /d/x.py\ncp x.py /d/", "cp cannot write the file /w/s/x.py over the folder /d/x.py"),
    ("mkdir -p /d/x.py/q\nmv x.py /d/", "mv cannot write the file /w/s/x.py over the folder /d/x.py"),
    # "cannot overwrite non-directory '/d/sub' with directory 'sub'"
    ("mkdir /d\ntouch /d/sub\ncp -r sub /d/", "cp cannot write the folder /w/s/sub over the file /d/sub"),
    ("mkdir /d\ntouch /d/f\ncp -rT sub /d/f", "cp cannot write the folder /w/s/sub over the file /d/f"),
    ("mkdir -p /d/e\nln -s /d /l\ncp -rT sub /l", "cp cannot write the folder /w/s/sub over the link /l"),
    ("mkdir -p /d/e\nln -s /d /l\nmv -T sub /l", "mv cannot write the folder /w/s/sub over the link /l"),
    # rename(2): "cannot move 'sub' to '/d/sub': Directory not empty"
    ("mkdir -p /d/sub/a\nmv sub /d/", "mv cannot move the folder /w/s/sub over /d/sub: that folder is not empty"),
    ("mkdir -p /d/a\ncp x.py /d/a/\nmv -T sub /d/a", "mv cannot move the folder /w/s/sub over /d/a: that folder is "
                                                    "not empty"),
])
def test_what_the_build_made_at_the_target_refuses_a_file_of_the_other_kind(script: str, reason: str) -> None:
    plan = plan_of(script_context(f"{script}\ncp x.py /after.py\n"))
    assert [(n.kind, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("fails", f"{reason}, so nothing is copied")]
    assert sorted(p for p in plan.image if not p.startswith("/w/")) == ["/after.py"] + (
        ["/d/a/x.py"] if "/d/a/" in script else [])


@pytest.mark.parametrize(("script", "placed"), [
    ("mkdir -p /d/sub/a\ncp -r sub /d/", "/d/sub/y.py"),  # cp merges into a folder
    ("mkdir -p /d/sub\nmv sub /d/", "/d/sub/y.py"),  # rename(2) replaces an empty folder
    ("mkdir -p /d/e\nln -s /d /l\ncp -r sub/. /l", "/d/y.py"),  # SRC/. copies into what the link leads to
    ("mkdir -p /d/e\nln -s /d /l\ncp -r sub /l", "/d/sub/y.py"),  # without -T the link is the folder it leads to
    ("mkdir /d\nln -s /d /l\nmv -T x.py /l", "/l"),  # mv replaces the link itself with the file
    ("mkdir -p /opt/q\ncp -a /usr/lib/q /opt/", None),  # a base image path: only the image knows its kind
])
def test_a_target_of_a_kind_the_copy_can_replace_or_fill_is_no_failure(script: str, placed: str | None) -> None:
    plan = plan_of(script_context(f"{script}\n"))
    assert not [n for n in plan.notes if n.kind == "fails"]
    assert placed is None or plan.image[placed].source in ("s/sub/y.py", "s/x.py")


@pytest.mark.parametrize(("script", "placed"), [
    # GNU cp 9.1 writes through the link: a.py is the empty file now; mv replaces the link itself.
    ("cp x.py /d/a.py\nln -s /d/a.py /d/l\ntouch t\ncp t /d/l", {}),
    ("cp x.py /d/a.py\nln -s /d/a.py /d/l\ntouch t\nmv t /d/l", {"/d/a.py": "s/x.py"}),
    # mv replaces a link to nothing with the link it moves; nothing is made where the old one led
    ("ln -s /w/s/x.py /d/a\nln -s /d/nowhere /d/b\nmv /d/a /d/b", {"/d/b": "s/x.py"}),
])
def test_a_link_at_the_target_is_written_through_by_cp_and_replaced_by_mv(script: str,
                                                                           placed: dict[str, str]) -> None:
    plan = plan_of(script_context(f"mkdir /d\n{script}\n"))
    assert not plan.notes
    assert {path: plan.image[path].source for path in plan.image if path.startswith("/d/")} == placed


# GNU mv and cp 9.1: "'sub' and './sub' are the same file" (status 1); the folder stays where it was.
@pytest.mark.parametrize("move", ["mv -T sub sub", "mv sub .", "cp -r sub .", "cp -rT sub sub",
                                  "ln -s /w/s /made/lk\nmv sub /made/lk/"])
def test_a_folder_moved_or_copied_onto_itself_stays_and_the_command_fails(move: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{move} || cp x.py /made/failed.py\ncp -r sub /made/c\n"))
    assert "/made/c/y.py" in plan.image and "/made/failed.py" in plan.image
    assert [n.kind for n in plan.notes if n.line == move.count("\n") + 2] == ["fails"]


# rm of LINK/ to a folder without -r, or with -r to a file, fails and keeps the link (checked under bash 5.2.15
# and dash 0.5.12 with GNU coreutils 9.1).
@pytest.mark.parametrize(("link", "command", "reason"), [
    ("sub", "rm l/", "/w/s/l is a folder and rm was not told -r, so it stays"),
    ("x.py", "rm -r l/", "l/ names a folder, and /w/s/l is a file, so rm fails"),
])
def test_rm_of_a_link_with_a_slash_that_fails_keeps_the_link(link: str, command: str, reason: str) -> None:
    source = "l/y.py" if link == "sub" else "l"
    plan = run_script(f"ln -s {link} l\n{command} || cp x.py /dest/failed\ncp {source} /dest/through-link\n")
    assert in_dest(plan) == ["/dest/failed", "/dest/through-link"]
    assert notes(plan) == [("fails", 2, command, reason)]
