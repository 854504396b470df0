"""cp, install, mv, ln and rsync as GNU coreutils run them: flags combined or long, folders, targets.

``cp`` copies a folder only with -r/-R/-a (else it fails and copies
nothing); ``-t DIR`` copies into DIR, ``-T`` makes DEST the copy itself,
``--`` ends the options; a copy into an existing folder lands inside it.
Options that change where files land and are not understood make the
command unread, never guessed.
"""

from __future__ import annotations

import pytest

from patcher.shipping.install_script import read_install_script
from tests.shipping.conftest import image_of, in_dest, notes, notes_of, plan_of, run_script, script_context

X, Y, Z = "s/x.py", "s/sub/y.py", "s/sub/deep/z.py"


def placed(script: str) -> dict[str, str]:
    """What the script placed outside its own folder: image path -> context file."""
    image = image_of(script_context(script))
    return {path: source for path, source in image.items() if not path.startswith("/w/s/")}


RUN_FAILS = "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted before it)"


@pytest.mark.parametrize(("command", "expected"), [
    ("cp -rf sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp -av sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp -R sub /made", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp --recursive sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp --archive sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),  # --archive is -a: it recurses
    ("cp --recur sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),  # getopt_long takes a prefix
    ("cp --target=/made x.py", {"/made/x.py": X}),
    ("cp -a sub /made/new", {"/made/new/y.py": Y, "/made/new/deep/z.py": Z}),
    ("cp -a sub/. /made", {"/made/y.py": Y, "/made/deep/z.py": Z}),
    ("cp sub/y.py -r -- /made", {"/made/y.py": Y}),  # options after operands, as GNU getopt reads them
    ("cp -t /made x.py sub/y.py", {"/made/x.py": X, "/made/y.py": Y}),
    ("cp -rt /made sub", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp --target-directory=/made x.py", {"/made/x.py": X}),
    ("cp --target-directory /made x.py", {"/made/x.py": X}),
    ("cp -rT sub /made", {"/made/y.py": Y, "/made/deep/z.py": Z}),
    ("cp -T x.py /made/renamed.py", {"/made/renamed.py": X}),
    ("cp -- x.py /made/", {"/made/x.py": X}),
    ("cp x.py sub/y.py /made", {"/made/x.py": X, "/made/y.py": Y}),
    ("cp ./x.py /made/copy.py", {"/made/copy.py": X}),
    ("cp x.py /made/.", {"/made/x.py": X}),
    ("cp sub/*.py /made/", {"/made/y.py": Y}),
    ("cp --parents sub/deep/z.py /made/", {"/made/sub/deep/z.py": Z}),
    ("/bin/cp -f x.py /made/", {"/made/x.py": X}),
])
def test_cp_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


@pytest.mark.parametrize("command", ["cp sub /made/", "cp sub /made/new", "cp -f sub /made/", "cp -T sub /made"])
def test_cp_of_a_folder_without_r_copies_nothing(command: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\necho done\n"))
    assert not any(path.startswith("/made/") for path in plan.image)
    (note,) = [n for n in plan.notes if n.kind == "fails"]
    assert note.line == 2 and "cp was not told to copy folders (-r)" in note.reason


def test_a_base_image_file_among_the_sources_does_not_stop_the_copy_of_the_others() -> None:
    # cp copies each source in turn: the base image's file lands too (unseen), then the context's files after it.
    plan = plan_of(script_context("mkdir /made\ncp /usr/share/vllm/defaults.cfg x.py sub/y.py /made/\n"))
    assert {p: placed.source for p, placed in plan.image.items() if p.startswith("/made/")} == {
        "/made/x.py": X, "/made/y.py": Y}
    assert plan.notes == ()


def test_cp_into_a_folder_that_already_holds_the_copy_merges_into_it() -> None:
    assert placed("mkdir /made\ncp -r sub /made\ncp -r sub /made\n") == {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}


@pytest.mark.parametrize(("command", "expected"), [
    ("install -D x.py /opt/a/b/x.py", {"/opt/a/b/x.py": X}),
    ("install -D -m 0644 x.py /opt/a/", {"/opt/a/x.py": X}),
    ("install -m 644 x.py /made/mode.py", {"/made/mode.py": X}),
    ("install --mode=644 -o root -g root x.py /made/", {"/made/x.py": X}),
    ("install -t /made -m 0755 x.py sub/y.py", {"/made/x.py": X, "/made/y.py": Y}),
    ("ln -s x.py l && install l /made/", {"/made/l": X}),  # GNU install 9.1 copies the file a link leads to
    ("install -Dt /opt/t x.py", {"/opt/t/x.py": X}),
    ("install -d /made/d && install x.py /made/d", {"/made/d/x.py": X}),
])
def test_install_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


@pytest.mark.parametrize(("command", "recursive"), [
    ("cp a.py /d/", False), ("cp -r a /d/", True), ("cp -a a /d/", True), ("cp --recursive a /d/", True),
    ("install -m 644 a.py /d/a.py", False), ("install -D a.py /d/a.py", False), ("install -t /d a.py", False),
    ("mv a /d/", True), ("ln -s /w/a /d/a", True),
    ("rsync -a a /d/", True), ("rsync -a a/ /d/", True), ("rsync -r a /d", True), ("rsync a.py /d/", False),
])
def test_a_script_read_on_its_own_reports_which_copies_take_whole_folders(command: str, recursive: bool) -> None:
    (copy,) = read_install_script(command + "\n", "/w").copies
    assert copy.recursive is recursive


@pytest.mark.parametrize(("command", "destination"), [
    ("cp -r a /d/", "/d/"), ("cp a.py /d", "/d"), ("rsync -a a /d/", "/d/"), ("rsync -a a/ /d/", "/d/"),
    ("rsync -a a /d", "/d"), ("rsync a.py /d/", "/d/"), ("rsync -a a b /d/", "/d/"),
])
def test_a_script_read_on_its_own_reports_a_copys_destination_as_written(command: str, destination: str) -> None:
    assert {copy.destination for copy in read_install_script(command + "\n", "/w").copies} == {destination}


def test_a_script_read_on_its_own_without_its_path_is_taken_as_install_sh_at_the_root() -> None:
    # "$0" is where the script runs from: with no path given it is /install.sh, so its folder is '/'.
    read = read_install_script('cp "$(dirname "$0")/ops.py" /opt/vllm/\ncp "$0" /opt/vllm/\n', "/w")
    assert [(copy.source, copy.destination) for copy in read.copies] == [
        ("/ops.py", "/opt/vllm/"), ("/install.sh", "/opt/vllm/")]


def test_install_does_not_copy_folders() -> None:
    plan = plan_of(script_context("install -D sub /opt/sub\necho done\n"))
    assert not any(path.startswith("/opt/") for path in plan.image)
    assert "install does not copy folders" in plan.notes[0].reason


def test_mv_moves() -> None:
    plan = plan_of(script_context("mkdir /made\nmv sub /made/moved\nmv x.py /made/\n"))
    image = {path: p.source for path, p in plan.image.items()}
    assert image == {"/w/s/i.sh": "s/i.sh", "/made/moved/y.py": Y, "/made/moved/deep/z.py": Z, "/made/x.py": X}
    assert plan.ships(X) and plan.copied[X] == "/made/x.py"  # it ships, only elsewhere


def test_ln_s_shows_the_target_at_the_link() -> None:
    assert placed("mkdir /made\nln -s /w/s/sub /made/link\nln -sf ../w/s/x.py /made/x.py\n") == {
        "/made/link/y.py": Y, "/made/link/deep/z.py": Z, "/made/x.py": X}


@pytest.mark.parametrize(("command", "expected"), [
    ("rsync -a sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("rsync -av sub/ /made/copy", {"/made/copy/y.py": Y, "/made/copy/deep/z.py": Z}),
    ("rsync --archive --progress x.py /made/", {"/made/x.py": X}),
    ("rsync -r sub x.py /made", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z, "/made/x.py": X}),
    ("mkdir /made/x.py\nrsync x.py /made/", {"/made/x.py": X}),  # rsync 3.2.7 replaces an empty folder (status 0)
])
def test_rsync_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


@pytest.mark.parametrize("command", ["rsync -a sub /made/", "rsync -a sub/ /made/copy", "rsync x.py /made/"])
def test_each_file_rsync_placed_names_rsync_as_its_last_step(command: str) -> None:
    plan = plan_of(script_context(f"mkdir -p /made\n{command}\n"))
    made = {path: placed.steps[-1] for path, placed in plan.image.items() if path.startswith("/made/")}
    assert made and {(step.file, step.line, step.command) for step in made.values()} == {("s/i.sh", 2, "rsync")}



def test_rm_removes_what_it_names_and_nothing_beside_it() -> None:
    assert placed("mkdir /made\ncp -r sub /made/sub\ncp -r sub /made/subway\nrm -rf /made/sub\n") == {
        "/made/subway/y.py": Y, "/made/subway/deep/z.py": Z}


@pytest.mark.parametrize(("command", "why"), [
    ("cp --attributes-only x.py /made/", "cp with --attributes-only"),
    ("cp -X x.py /made/", "cp with -X"),
    ("rsync -a --exclude='*.pyc' sub /made/", "rsync with --exclude=*.pyc"),
    ("ln --relative -s --bogus x.py /made/", "ln with --bogus"),
    ("install --strip-program=x --bogus x.py /made/", "install with --bogus"),
    ("rm -f --ve /made/x.py", "rm with --ve"),  # --verbose or --version: GNU rm refuses it as ambiguous
    ("mkdir --bogus /made/b", "mkdir with --bogus"),  # GNU mkdir refuses it and makes nothing
])
def test_an_option_the_reader_does_not_know_makes_the_command_unread(command: str, why: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert not any(path.startswith("/made/") for path in plan.image)
    (note,) = [n for n in plan.notes if n.kind == "unread"]
    assert (note.line, note.text) == (2, command) and note.reason.startswith(why)


def test_an_rm_the_reader_does_not_follow_is_a_caveat_on_what_it_names_only() -> None:
    plan = plan_of(script_context("mkdir /made\ncp x.py /made/x.py\ncp x.py /made/y.py\nrm -f --ve /made/x.py\n"))
    assert [(n.kind, n.line, n.scope) for n in plan.notes] == [("unread", 4, ("/made/x.py",))]
    assert [n.line for n in plan.caveats(X, ("/made/x.py",))] == [4] and plan.caveats(X, ("/made/y.py",)) == ()


def test_cp_no_clobber_may_not_copy_over_the_base_image() -> None:
    plan = plan_of(script_context("cp -n x.py /usr/lib/vllm/x.py\n"))
    (note,) = [n for n in plan.notes if n.kind == "unread"]
    assert note.scope == ("/usr/lib/vllm/x.py",) and "the base image may have it" in note.reason


def test_a_destination_with_an_unknown_part_is_unread_with_what_it_could_reach() -> None:
    plan = plan_of(script_context('cp x.py "/opt/$NOBODY_SET_THIS/x.py"\ncp x.py "$ALSO_UNSET/x.py"\n'))
    assert [(n.line, n.scope) for n in plan.notes if n.kind == "unread"] == [(1, ("/opt",)), (2, None)]


def test_a_copy_from_a_program_output_is_unread() -> None:
    plan = plan_of(script_context(
        "VLLM=$(python3 -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')\ncp x.py $VLLM/attention/\n"))
    assert notes_of(plan, "unread") == [("s/i.sh", 2, "cp x.py $VLLM/attention/")]
    assert "$(python3 -c" in plan.notes[0].reason


def test_a_base_image_reading_the_reader_assumes_is_noted() -> None:
    plan = plan_of(script_context("cp x.py /usr/lib/python3/dist-packages/vllm/ops\ncp -r sub /opt/pkg\n"))
    assert plan.image["/usr/lib/python3/dist-packages/vllm/ops/x.py"].source == X
    assert plan.image["/opt/pkg/y.py"].source == Y
    assert [n.line for n in plan.notes if n.kind == "assumed"] == [1, 2]


# -- more forms: options as GNU getopt reads them, mv, ln, rsync, install, rm, mkdir, touch --------

@pytest.mark.parametrize(("command", "expected"), [
    ("cp --preserve x.py /made/a.py", {"/made/a.py": X}),  # --preserve[=LIST]: an argument only after '='
    ("cp --preserve=mode x.py /made/a.py", {"/made/a.py": X}),
    ("cp --backup x.py /made/a.py", {"/made/a.py": X}),
    ("cp --backup=numbered --suffix .bak x.py /made/a.py", {"/made/a.py": X}),
    ("cp -S .bak --suffix=.b x.py /made/a.py", {"/made/a.py": X}),
    ("cp --reflink --sparse=always --no-preserve=all x.py /made/a.py", {"/made/a.py": X}),
    ("cp -p -v -f -i -L -P -d -H -x -l -s -b -Z x.py /made/a.py", {"/made/a.py": X}),
    ("cp --archive --force --interactive --no-dereference --dereference --link --symbolic-link --verbose "
     "--one-file-system --remove-destination --strip-trailing-slashes --debug x.py /made/a.py", {"/made/a.py": X}),
    ("cp --parents sub/y.py x.py /made/", {"/made/sub/y.py": Y, "/made/x.py": X}),
    ("cp --parents -r sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    # GNU cp 9.1: an absolute source keeps its whole path below DEST (the leading '/' dropped).
    ("cp --parents /w/s/x.py /made/", {"/made/w/s/x.py": X}),
    ("cp --parents -r /w/s/sub /made", {"/made/w/s/sub/y.py": Y, "/made/w/s/sub/deep/z.py": Z}),
    ("cp -r sub/ /made/copy", {"/made/copy/y.py": Y, "/made/copy/deep/z.py": Z}),
    ("mv -t /made x.py sub", {"/made/x.py": X, "/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("mv -T sub /made/t", {"/made/t/y.py": Y, "/made/t/deep/z.py": Z}),
    ("mv --target-directory=/made -f -v x.py", {"/made/x.py": X}),
    ("ln -s /w/s/sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("ln -st /made /w/s/x.py /w/s/sub", {"/made/x.py": X, "/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("ln -sT /w/s/sub /made/t", {"/made/t/y.py": Y, "/made/t/deep/z.py": Z}),
    ("ln -sn /w/s/sub /made/n", {"/made/n/y.py": Y, "/made/n/deep/z.py": Z}),
    ("ln /w/s/x.py /made/hard.py", {"/made/hard.py": X}),
    ("ln -s ../w/s/x.py /made/rel.py", {"/made/rel.py": X}),  # a relative target is read from the link's folder
    ("ln -s ../../w/s/sub/y.py /made/sub2/", {}),  # /made/sub2 is not there: the link is not made
    ("ln -st /made/bin /w/s/x.py", {}),  # -t names a folder that is not there: ln fails, nothing is linked
    ("ln -sf /w/s/x.py /made/f.py\nln -sf /w/s/sub/y.py /made/f.py", {"/made/f.py": Y}),
    # -f removes an existing LINK, but a folder there takes the link inside it; -n (--no-dereference) makes a link
    # to a folder the LINK itself, so that `ln -sfn NEW current` repoints it.
    ("cp x.py /made/keep.py\nln -sf /w/s/sub/y.py /made", {"/made/keep.py": X, "/made/y.py": Y}),
    ("cp x.py /made/keep.py\nln -sf /w/s/sub/y.py /made/", {"/made/keep.py": X, "/made/y.py": Y}),
    ("ln -s /w/s/sub /made/cur\nln -sf /w/s/x.py /made/cur", {"/made/cur/y.py": Y, "/made/cur/deep/z.py": Z,
                                                              "/made/cur/x.py": X}),
    ("ln -s /w/s/sub /made/cur\nln -sfn /w/s/sub/deep /made/cur", {"/made/cur/z.py": Z}),
    # ln -s TARGET FOLDER makes FOLDER/TARGET's-name the link: -sfn repoints that link, not a folder inside it.
    ("mkdir /made/v\nln -s /w/s/sub /made/v\nln -sfn /w/s/sub/deep /made/v/sub", {"/made/v/sub/z.py": Z}),
    ("ln -s /w/s/sub /made/cur\nln -sfT /w/s/sub/deep /made/cur", {"/made/cur/z.py": Z}),  # -T: LINK is the name
    ("ln -s /w/s/sub /made/cur\nln --symbolic --force --no-dereference /w/s/sub/deep /made/cur", {"/made/cur/z.py": Z}),
    ("ln x.py /made/hard.py", {"/made/hard.py": X}),  # a hard link's relative target is read from the current folder
    ("cd /made\nln -s ../w/s/x.py .", {"/made/x.py": X}),
    ("cd /made\nln -s /w/s/x.py", {"/made/x.py": X}),
    ("rsync -a sub/ /made/", {"/made/y.py": Y, "/made/deep/z.py": Z}),
    ("rsync x.py sub/y.py /made/two", {"/made/two/x.py": X, "/made/two/y.py": Y}),
    ("rsync x.py /made/one.py", {"/made/one.py": X}),
    ("rsync -avz --chmod=644 --info=progress2 --out-format=%n --log-file=/tmp/l x.py /made/", {"/made/x.py": X}),
    ("rsync --mkpath x.py /made/deep/er/", {"/made/deep/er/x.py": X}),
    ("mkdir /tmp/logs\nrsync -a /tmp/logs /made/\ncp x.py /made/logs/", {"/made/logs/x.py": X}),  # made even empty
    ("install -d /made/i1 /made/i2\ninstall x.py /made/i2", {"/made/i2/x.py": X}),
    ("install -D -t /made/q/r x.py", {"/made/q/r/x.py": X}),
    ("install -T x.py /made/t.py", {"/made/t.py": X}),
    ("install -Dm644 x.py /made/z/x.py", {"/made/z/x.py": X}),
    ("install --directory /made/dd\ncp x.py /made/dd", {"/made/dd/x.py": X}),
    ("install -c -p -s -v -C -b -Z x.py /made/", {"/made/x.py": X}),
    ("install x.py sub/y.py /made/", {"/made/x.py": X, "/made/y.py": Y}),
    ("install -D x.py sub/y.py /made/dd/", {}),  # GNU 9.1: -D makes no folder of DEST itself
    ("mkdir /made/dd\ninstall -D x.py sub/y.py /made/dd/", {"/made/dd/x.py": X, "/made/dd/y.py": Y}),
    ("install --target-directory=/made --owner=root --group=root x.py", {"/made/x.py": X}),
    ("install --debug -m 0644 x.py /made/dbg.py", {"/made/dbg.py": X}),  # coreutils 9.2+
    ("install --preserve-timestamps --compare -m 0644 x.py /made/ts.py", {"/made/ts.py": X}),
    ("install --no-target-directory -m 0644 x.py /made/nt.py", {"/made/nt.py": X}),
    ("ln -s /w/s/x.py /w/s/sub/y.py /made/none", {}),  # several targets need LINK to be a folder: ln fails
    ("ln -s --target-directory=/made /w/s/x.py /w/s/sub",
     {"/made/x.py": X, "/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("mkdir -p /made/a/b\ncp x.py /made/a/b/", {"/made/a/b/x.py": X}),
    ("mkdir -m 755 /made/m\ncp x.py /made/m", {"/made/m/x.py": X}),
    ("mkdir --parents --mode=700 /made/p/q\ncp x.py /made/p/q", {"/made/p/q/x.py": X}),
    ("mkdir /made/n1 /made/n2\ncp x.py /made/n2", {"/made/n2/x.py": X}),
    # --context[=CTX] (SELinux) takes a value only after '=': alone, the next word is the folder to make.
    ("mkdir --context /made/c\ncp x.py /made/c", {"/made/c/x.py": X}),
    ("mkdir -p --context=system_u:object_r:usr_t:s0 /made/c\ncp x.py /made/c", {"/made/c/x.py": X}),
    ("touch /made/t.py\ncp /made/t.py /made/u.py", {}),  # a file the build wrote, not one of the context
    ("cp x.py /made/a.py\ntouch /made/a.py", {"/made/a.py": X}),
    ("cp x.py /made/a.py\ntouch -c /made/b.py\ncp x.py /made/b.py", {"/made/a.py": X, "/made/b.py": X}),
    ("cp x.py /made/a.py\necho new > /made/a.py", {}),
    ("cp x.py /made/a.py\necho more >> /made/b.py", {"/made/a.py": X}),
    ("cp x.py /made/a.py\nrm -f /made/a.py /made/none.py", {}),
    ("cp -r sub /made/\nrm -r -f -v --one-file-system --preserve-root /made/sub", {}),
    ("cp x.py /made/a.py\nrm --force --verbose --dir /made/a.py", {}),
    ("rsync -rlptgoD --group --owner --perms --times --links x.py /made/", {"/made/x.py": X}),
    ("rsync -a --no-owner --no-group --checksum --whole-file --inplace x.py /made/", {"/made/x.py": X}),
    ("rsync --archive --verbose --human-readable --stats sub/ /made/v", {"/made/v/y.py": Y, "/made/v/deep/z.py": Z}),
])
def test_more_file_command_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


# GNU ln 9.1: -n and -T act on a LINK that is a symbolic link; a real folder there keeps what it holds.
def test_ln_n_onto_a_real_folder_puts_the_link_inside_it() -> None:
    assert placed("mkdir -p /made/real\ncp x.py /made/real/\nln -sfn /w/s/sub /made/real\n") == {
        "/made/real/x.py": X, "/made/real/sub/y.py": Y, "/made/real/sub/deep/z.py": Z}


def test_ln_t_onto_a_real_folder_fails_and_leaves_it() -> None:
    plan = plan_of(script_context("mkdir -p /made/real\ncp x.py /made/real/\nln -sfT /w/s/sub /made/real || true\n"))
    assert {p: s.source for p, s in plan.image.items() if p.startswith("/made/")} == {"/made/real/x.py": X}
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("fails", 3, "ln cannot overwrite the folder /made/real with a link")]


def test_a_link_removed_with_its_folder_is_a_folder_again_when_remade() -> None:
    script = "mkdir -p /made\nln -s /w/s/sub /made/cur\nrm -rf /made/cur\nmkdir /made/cur\nln -sfn /w/s/sub/deep /made/cur\n"
    assert placed(script) == {"/made/cur/deep/z.py": Z}


@pytest.mark.parametrize("script", [
    "mkdir -p /made/ops\ninstall -D -m 644 x.py /made/ops",
    "cp -r sub /made/ops\ninstall -Dm644 x.py /made/ops",
])
def test_install_d_onto_a_folder_that_stands_there_installs_inside_it(script: str) -> None:
    # -D only makes DEST's leading folders: GNU install still copies into a DEST that is a folder.
    image = placed(f"mkdir /made\n{script}\n")
    assert image["/made/ops/x.py"] == X and "/made/ops" not in image


def test_mv_takes_the_source_away() -> None:
    plan = plan_of(script_context("mkdir /made\nmv x.py /made/a.py\ncp x.py /made/b.py\n"))
    assert {path: p.source for path, p in plan.image.items() if path.startswith("/made/")} == {"/made/a.py": X}
    assert [(n.kind, n.line, n.reason) for n in plan.notes][:1] == [
        ("fails", 3, "/w/s/x.py does not exist at this point of the build, so nothing is copied")]


@pytest.mark.parametrize(("script", "expected"), [
    # --delete makes the folder a folder source is synced to hold only what the source holds.
    ("rsync -a --delete sub/ /made/d/; cp x.py /made/d/x.py; rsync -a --delete sub/ /made/d/",
     {"/made/d/y.py": Y, "/made/d/deep/z.py": Z}),
    ("cp x.py /made/keep.py\nrsync -a --delete sub /made/\ncp x.py /made/sub/gone.py\nrsync -a --delete sub /made/",
     {"/made/keep.py": X, "/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp -r sub /made/\nrsync -a --delete sub/deep/ /made/sub/", {"/made/sub/z.py": Z}),
    ("cp -r sub /made/\nrsync -a --delete x.py /made/sub/", {"/made/sub/x.py": X, "/made/sub/y.py": Y,
                                                             "/made/sub/deep/z.py": Z}),  # files: nothing deleted
    ("cp -r sub /made/\nrsync -a sub/deep/ /made/sub/", {"/made/sub/z.py": Z, "/made/sub/y.py": Y,
                                                         "/made/sub/deep/z.py": Z}),
])
def test_rsync_delete_removes_only_what_a_synced_folder_does_not_hold(script: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{script}\n") == expected


@pytest.mark.parametrize(("command", "note"), [
    ("cp -n x.py /usr/lib/vllm/x.py", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the base image "
                                      "may have it"),
    ("cp -u x.py /usr/lib/vllm/x.py", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the base image "
                                      "may have it"),
    ("cp --update x.py /usr/lib/vllm/x.py", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the base "
                                            "image may have it"),
    ("cp --update=none x.py /usr/lib/vllm/x.py", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the "
                                                 "base image may have it"),
    ("cp --update=older x.py /usr/lib/vllm/x.py", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the "
                                                  "base image may have it"),
    ("mv --no-clobber x.py /usr/lib/vllm/x.py", "mv copies only if /usr/lib/vllm/x.py does not exist yet, and the "
                                                "base image may have it"),
    ("mv --update=none x.py /usr/lib/vllm/x.py", "mv copies only if /usr/lib/vllm/x.py does not exist yet, and the "
                                                 "base image may have it"),
    ("mv -n x.py /usr/lib/vllm/x.py", "mv copies only if /usr/lib/vllm/x.py does not exist yet, and the base image "
                                      "may have it"),
    ("mv -u x.py /usr/lib/vllm/x.py", "mv copies only if /usr/lib/vllm/x.py does not exist yet, and the base image "
                                      "may have it"),
    ("mv --update x.py /usr/lib/vllm/x.py", "mv copies only if /usr/lib/vllm/x.py does not exist yet, and the base "
                                            "image may have it"),
    ("cp --parents -n x.py /usr/lib/vllm/", "cp copies only if /usr/lib/vllm/x.py does not exist yet, and the base "
                                            "image may have it"),  # --parents keeps -n for each path it makes
])
def test_a_copy_that_may_not_overwrite_the_base_image_is_a_caveat(command: str, note: str) -> None:
    plan = plan_of(script_context(command + "\n"))
    assert plan.image["/usr/lib/vllm/x.py"].source == X  # read as done...
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 1, note, ("/usr/lib/vllm/x.py",))]  # ...but what stays there is the base image's to decide


@pytest.mark.parametrize("command", ["cp -n sub/y.py /made/x.py", "cp --no-clobber sub/y.py /made/",
                                     "cp -nu sub/y.py /made/x.py", "cp -un sub/y.py /made/x.py",
                                     "mv -n sub/y.py /made/x.py"])
def test_a_no_clobber_copy_onto_a_file_the_build_placed_leaves_it_and_copies_nothing(command: str) -> None:
    # GNU cp/mv 9.1: 'cp -n' onto a file that exists leaves it (-n wins over -u), whatever the base image holds:
    # nothing is unread. Its status is the image's: coreutils 9.2 to 9.4 fail it, 9.1 and 9.5 on succeed.
    plan = plan_of(script_context(f"mkdir /made\ncp x.py /made/x.py\ncp x.py /made/y.py\n{command}\n"
                                  "[ -f sub/y.py ] && cp x.py /made/source_stays.py\n"))
    assert {path: placed.source for path, placed in plan.image.items() if path.startswith("/made/")} == {
        "/made/x.py": X, "/made/y.py": X, "/made/source_stays.py": X}
    target = "/made/y.py" if command.endswith("/made/") else "/made/x.py"
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [(
        "assumed", 4, f"{command[:2]} -n leaves {target}, which the build placed there: coreutils 9.2 to 9.4 fail "
                      "the command, other versions succeed; the reader takes it to succeed")]


@pytest.mark.parametrize("command", ["cp -u sub/y.py /made/x.py", "mv --update=older sub/y.py /made/x.py"])
def test_an_update_copy_onto_a_file_the_build_placed_depends_on_which_is_newer(command: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\ncp x.py /made/x.py\n{command}\n"))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [(
        "unread", 3, f"{command[:2]} copies only if /w/s/sub/y.py is newer than /made/x.py", ("/made/x.py",))]


@pytest.mark.parametrize("command", ["cp --update=all x.py /usr/lib/vllm/x.py", "cp -n x.py /made/x.py",
                                     "cp --update=all -f x.py /made/y.py"])
def test_a_copy_that_overwrites_or_lands_where_nothing_stood_is_no_caveat(command: str) -> None:
    assert plan_of(script_context(f"mkdir /made\n{command}\n")).notes == ()


@pytest.mark.parametrize(("command", "note"), [
    ("cp -r sub /usr/lib/python3/vllm", "/usr/lib/python3/vllm is taken not to exist in the base image (else "
                                        "/w/s/sub would land inside it, as /usr/lib/python3/vllm/sub)"),
    ("cp x.py /usr/lib/python3/vllm", "/usr/lib/python3/vllm is taken to be a folder of the base image (else "
                                      "/w/s/x.py would be copied as /usr/lib/python3/vllm itself)"),
    ("mv sub /usr/lib/python3/vllm", "/usr/lib/python3/vllm is taken not to exist in the base image (else "
                                     "/w/s/sub would land inside it, as /usr/lib/python3/vllm/sub)"),
])
def test_a_reading_that_depends_on_the_base_image_says_which_it_took(command: str, note: str) -> None:
    plan = plan_of(script_context(command + "\n"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [("assumed", 1, command, note)]


@pytest.mark.parametrize(("command", "image_path"), [
    ("cp x.py /usr/lib/python3/vllm/", "/usr/lib/python3/vllm/x.py"),
    ("cp x.py /usr/lib/python3/x.py", "/usr/lib/python3/x.py"),  # the same name: the file itself
    ("cp x.py /usr/lib/python3/vllm.bak", "/usr/lib/python3/vllm.bak"),  # a dot: a file name
    ("cp -r sub /usr/lib/sub", "/usr/lib/sub/y.py"),  # the same name: the folder itself
    ("cp x.py /usr/lib/python3/.", "/usr/lib/python3/x.py"),
    ("cp x.py /usr/lib/python3/..", "/usr/lib/x.py"),
    ("ln -s /w/s/x.py /usr/lib/link", "/usr/lib/link"),  # a link is named for where it is made
    ("install -D -m 755 x.py /usr/local/bin/serve", "/usr/local/bin/serve"),  # -D names the file it makes
    ("install -T -m 755 x.py /usr/local/bin/serve", "/usr/local/bin/serve"),  # so does -T
    ("ln -s /w/s/x.py /w/s/sub/y.py /usr/local/bin", "/usr/local/bin/y.py"),  # several targets: LINK is a folder
    ("cp -r sub/ /usr/lib/python3/pkg/", "/usr/lib/python3/pkg/sub/y.py"),
    ("cp -r sub/. /usr/lib/python3/pkg", "/usr/lib/python3/pkg/y.py"),
])
def test_a_base_image_destination_read_the_way_its_spelling_says(command: str, image_path: str) -> None:
    plan = plan_of(script_context(command + "\n"))
    assert image_path in plan.image and plan.notes == ()


@pytest.mark.parametrize(("script", "expected"), [
    ("cat x.py > /made/paged_attn.py", {"/made/paged_attn.py": X}),
    ("cat -- sub/y.py >| /made/paged_attn.py", {"/made/paged_attn.py": Y}),
    ("cat < x.py > /made/paged_attn.py", {"/made/paged_attn.py": X}),
    ("cat - < sub/y.py &> /made/paged_attn.py", {"/made/paged_attn.py": Y}),
    ("tee /made/paged_attn.py < x.py > /dev/null", {"/made/paged_attn.py": X}),
    ("D=/made\ncat \"$D/../w/s/x.py\" > \"$D/paged_attn.py\"", {"/made/paged_attn.py": X}),
    ("tee /made/a.py /made/b.py < x.py", {"/made/a.py": X, "/made/b.py": X}),  # each file tee names
    # A redirection onto a link writes through it: the file it leads to gets SRC's bytes, the link stays.
    ("cp sub/y.py /made/t.py\nln -s t.py /made/l\ncat x.py > /made/l", {"/made/t.py": X, "/made/l": X}),
    # An append onto what is not there yet makes the file with SRC's bytes alone (a folder 'mkdir -p' made may be
    # the base image's, with files of its own: a plain mkdir makes a new one).
    ("mkdir /made/n\ncat x.py >> /made/n/paged_attn.py", {"/made/n/paged_attn.py": X}),
    ("mkdir /made/n\ncat < sub/y.py &>> /made/n/paged_attn.py", {"/made/n/paged_attn.py": Y}),
    ("mkdir /made/n\ntee -a /made/n/paged_attn.py < x.py", {"/made/n/paged_attn.py": X}),
    ("cat x.py >> /made/paged_attn.py", {}),
    # Not a copy: the file gets other bytes (several files, numbered lines, a here-document, an append to a file).
    ("cp sub/y.py /made/paged_attn.py\ncat x.py >> /made/paged_attn.py", {"/made/paged_attn.py": Y}),
    ("cat x.py sub/y.py > /made/paged_attn.py", {}),
    ("cat -n x.py > /made/paged_attn.py", {}),
    ("cat <<'EOF' > /made/paged_attn.py\nx = 1\nEOF", {}),
])
def test_cat_or_tee_of_one_file_into_another_is_a_copy(script: str, expected: dict[str, str]) -> None:
    # 'cat SRC > DEST' gives DEST the bytes of SRC, as 'cp SRC DEST' does: the image ships SRC there.
    assert placed(f"mkdir -p /made\n{script}\n") == expected


@pytest.mark.parametrize("script", [
    "cat \"$(uname -m)\" > /made/paged_attn.py", "cat < \"$(uname -m)\" > /made/paged_attn.py",
    "tee /made/paged_attn.py < \"$(uname -m)\"",
])
def test_cat_or_tee_of_a_file_only_the_build_machine_names_is_no_copy_and_no_failure(script: str) -> None:
    # The file is opened all the same (emptied, then given bytes the reader cannot know), and cat may well find
    # its source: the context file placed there is gone, and nothing says the build stops.
    plan = plan_of(script_context(f"mkdir -p /made\ncp x.py /made/paged_attn.py\n{script}\n"))
    assert "/made/paged_attn.py" not in plan.image
    assert notes_of(plan, "fails") == []


@pytest.mark.parametrize("script", ["cat x.py > \"/made/$(uname -m).py\"", "tee \"/made/$(uname -m).py\" < x.py"])
def test_cat_or_tee_into_a_file_only_the_build_machine_names_places_nothing_the_reader_can_name(script: str) -> None:
    assert placed(f"mkdir -p /made\n{script}\n") == {}


def test_cat_of_a_file_that_is_not_there_fails_and_leaves_the_destination_emptied() -> None:
    plan = plan_of(script_context("mkdir -p /made\ncp x.py /made/paged_attn.py\ncat gone.py > /made/paged_attn.py\n"))
    assert "/made/paged_attn.py" not in plan.image
    assert [(n.kind, n.line) for n in plan.notes if n.file == "s/i.sh"] == [("fails", 3)]


@pytest.mark.parametrize("copy", ["cp -a sub /made/", "cp -r sub /made/", "mv sub /made/", "rsync -a sub /made/",
                                  "ln -s /w/s/sub /made/sub"])
def test_a_folder_copy_takes_its_empty_folders_and_the_files_the_build_wrote(copy: str) -> None:
    # 'mkdir -p sub/empty; touch sub/.keep' then a copy of sub: both are in the copy (coreutils 9.1, rsync 3.2).
    plan = plan_of(script_context(f"mkdir /made\nmkdir -p sub/empty\ntouch sub/.keep\n{copy}\n"
                                  "[ -d /made/sub/empty ] && [ -f /made/sub/.keep ] && cp x.py /made/both.py\n"))
    assert plan.image["/made/both.py"].source == X and plan.notes == ()


LOCAL_WITHOUT_VALUE = 'D=/opt/a\nf() { local D; cp x.py "$D/"; }\nf\n'  # bash: D is unset ("/"); dash: /opt/a


@pytest.mark.parametrize("interpreter", ["#!/bin/mksh\n", "#!/usr/bin/env posh\n"])
def test_a_script_for_a_shell_the_reader_does_not_model_is_read_as_sh(interpreter: str) -> None:
    # Read as sh: where bash and dash part ways (a bare 'local D' unsets D in bash, keeps it in dash), the
    # reader does not take either's answer as the shell's.
    as_sh = read_install_script("#!/bin/sh\n" + LOCAL_WITHOUT_VALUE, "/w").copies
    as_dash = read_install_script("#!/bin/dash\n" + LOCAL_WITHOUT_VALUE, "/w").copies
    assert [(c.source, c.destination) for c in as_dash] == [("/w/x.py", "/opt/a/")]
    assert read_install_script(interpreter + LOCAL_WITHOUT_VALUE, "/w").copies == as_sh != as_dash


def test_install_names_itself_when_it_refuses_a_backup_type() -> None:
    # GNU install 9.1: "install: invalid argument 'bogus' for 'backup type'", status 1, nothing copied.
    plan = run_script("install --backup=bogus x.py /dest/\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason) for n in plan.notes][0] == ("fails", "install: invalid argument 'bogus' for 'backup type'")


def test_a_link_moved_into_the_folder_it_leads_to_is_moved() -> None:
    # rename(2) moves the link itself: sub/lnk leads to sub, and mv succeeds (GNU mv 9.1), so the script reads on.
    plan = run_script("ln -s /w/s/sub lnk\nmv lnk sub/ || exit 1\ncp x.py /dest/\ncp sub/lnk/y.py /dest/\n")
    assert in_dest(plan) == ["/dest/x.py", "/dest/y.py"] and plan.notes == ()


def test_a_script_read_on_its_own_reports_a_moved_link_as_the_one_move_written() -> None:
    # mv LINK DEST renames the link (GNU mv 9.1: DEST is a link to the same target); the script copies nothing more.
    read = read_install_script("ln -s /w/a /w/l\nmv /w/l /d/m\n", "/w")
    assert [(copy.source, copy.destination) for copy in read.copies] == [("/w/a", "/w/l"), ("/w/l", "/d/m")]


def test_a_copy_under_bashs_version_is_unread_and_shown_as_written() -> None:
    # bash sets BASH_VERSION (5.2.15(1)-release on Debian 12): only the image knows which, so the folder is unknown.
    plan = run_script("cp x.py /opt/$BASH_VERSION/\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, "cp /opt/$BASH_VERSION/: a path that depends on a value the reader cannot work out")]


# GNU cp 9.1 reports the source it refuses or leaves ("-r not specified; omitting directory", "are the same file",
# "not writing through dangling symlink", "cannot overwrite non-directory ... with directory", -n) and goes on.
@pytest.mark.parametrize(("script", "expected"), [
    ("cp sub x.py /dest/\n", {"/dest/x.py": X}),
    ("cp x.py /dest/\ncp /dest/x.py sub/y.py /dest/\n", {"/dest/x.py": X, "/dest/y.py": Y}),
    ("ln -s /dest/no/x.py /dest/x.py\ncp x.py sub/y.py /dest/\n", {"/dest/y.py": Y}),
    ("ln -s none.py /dest/x.py\ncp x.py sub/y.py /dest/\n", {"/dest/y.py": Y}),
    ("cp x.py /dest/sub\ncp -r sub x.py /dest/\n", {"/dest/sub": X, "/dest/x.py": X}),
    ("cp sub/y.py /dest/x.py\ncp -n x.py sub/y.py /dest/\n", {"/dest/x.py": Y, "/dest/y.py": Y}),
])
def test_a_source_cp_refuses_or_leaves_does_not_stop_the_sources_after_it(script: str, expected: dict[str, str]) -> None:
    plan = run_script(script)
    assert {path: plan.image[path].source for path in in_dest(plan)} == expected


# Each of these fails in GNU coreutils 9.1 (status 1): as the RUN's last command, it fails the RUN.
@pytest.mark.parametrize(("script", "line"), [
    ("ln -s none.py /dest/x.py\ncp x.py /dest/\n", 2),  # "not writing through dangling symlink"
    ("cp x.py /dest/sub\ncp -r sub /dest/\n", 2),  # "cannot overwrite non-directory '/dest/sub' with directory"
    ("mkdir /dest/d\nln -s d /dest/x.py\ncp x.py /dest/\n", 3),  # "cannot overwrite directory ... non-directory"
    ("ln -s x.py l\ncp -P nothere.py l /dest/\n", 2),  # "cannot stat 'nothere.py'", though the link is copied
])
def test_a_copy_cp_refuses_fails_the_run_it_ends(script: str, line: int) -> None:
    plan = run_script(script)
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", line), ("fails", 4)]
    assert "/dest/x.py" not in plan.image and "/dest/d/x.py" not in plan.image


def test_copytree_copies_what_a_link_in_the_folder_leads_to() -> None:
    # CPython 3.11: shutil.copytree follows links by default (symlinks=False): /dest/t/l is a copy of x.py.
    plan = run_script("ln -s ../x.py sub/l\npython3 h.py\n",
                      files={"s/h.py": "import shutil\nshutil.copytree('sub', '/dest/t')\n"})
    assert {path: plan.image[path].source for path in in_dest(plan)} == {"/dest/t/l": X, "/dest/t/y.py": Y}


@pytest.mark.parametrize(("script", "stops"), [("set -e\ncp x.py /dest/\n", True), ("cp x.py /dest/\n", False)])
def test_a_copys_step_says_whether_a_failure_there_stops_the_build(script: str, stops: bool) -> None:
    assert run_script(script).image["/dest/x.py"].steps[-1].stops_on_error is stops


def test_the_files_a_moved_link_shows_name_mv_as_their_last_step() -> None:
    # GNU mv 9.1 renames the link: /dest/l leads to /w/s/sub, and shows y.py.
    plan = run_script("ln -s /w/s/sub l\nmv l /dest/\n")
    step = plan.image["/dest/l/y.py"].steps[-1]
    assert (plan.image["/dest/l/y.py"].source, step.line, step.command) == (Y, 2, "mv")


@pytest.mark.parametrize(("command", "status"), [
    ("rsync x.py /dest/new/x.py", "3"),  # rsync 3.2.7: change_dir "/dest/new" failed (code 3)
    ("rsync -a sub/ /dest/new/deeper/", "11"),  # mkdir "/dest/new/deeper" failed (code 11)
    ("rsync -a x.py sub /dest/new/deeper", "11"),
])
def test_rsync_makes_the_destination_folder_but_not_the_folders_above_it(command: str, status: str) -> None:
    plan = run_script(f"{command} || cp x.py /dest/failed$?.py\n")
    assert in_dest(plan) == [f"/dest/failed{status}.py"]


@pytest.mark.parametrize(("command", "placed"), [
    ("rsync -a sub/ /dest/new/", ["/dest/new/y.py"]), ("rsync x.py /dest/made/", ["/dest/made/x.py"]),
    ("rsync --mkpath x.py /dest/a/b/x.py", ["/dest/a/b/x.py"]),
])
def test_rsync_makes_one_folder_or_with_mkpath_all_of_them(command: str, placed: list[str]) -> None:
    assert in_dest(run_script(f"{command}\n")) == placed


@pytest.mark.parametrize("command", ["cp -rT x.py sub /dest/", "mv -T x.py sub/y.py /dest/",
                                     "install --no-target-directory x.py sub/y.py /dest/"])
def test_no_target_directory_with_more_than_one_source_copies_nothing(command: str) -> None:
    # GNU coreutils 9.1: "extra operand '...'", status 1; nothing copied, nothing moved.
    plan = run_script(f"{command} || cp x.py /dest/failed$?.py\n")
    assert in_dest(plan) == ["/dest/failed1.py"]
    assert "/w/s/sub/y.py" in plan.image


@pytest.mark.parametrize(("setup", "command"), [("mkdir -p /dest/x.py/inner", "rsync x.py /dest/"),
                                                ("mkdir /dest/x.py; cp x.py /dest/x.py/", "rsync -a x.py /dest")])
def test_rsync_does_not_put_a_file_over_a_folder_that_holds_anything(setup: str, command: str) -> None:
    # rsync 3.2.7: "cannot delete non-empty directory" (code 23); the folder stays.
    plan = run_script(f"{setup}\n{command} || cp x.py /dest/failed$?.py\n")
    assert "/dest/failed23.py" in in_dest(plan)
    assert [n.kind for n in plan.notes] == ["fails"]


# rm of one of two links that point at each other removes that link only: cp then will not write through the
# other, dangling (checked under bash 5.2.15 and dash 0.5.12 with GNU coreutils 9.1).
def test_removing_one_of_two_links_to_each_other_leaves_the_other_dangling() -> None:
    plan = run_script("ln -s /w/s/b /w/s/a\nln -s /w/s/a /w/s/b\nrm a\ncp x.py b\ncp a /dest/a.py\n")
    assert in_dest(plan) == []
    assert notes(plan) == [
        ("fails", 4, "cp x.py b", "/w/s/b is a link to /w/s/a, which does not exist, and cp does not write through "
                                  "it, so nothing is copied"),
        ("fails", 5, "cp a /dest/a.py", "/w/s/a does not exist at this point of the build, so nothing is copied"),
        ("fails", 4, "RUN cd /w/s && bash i.sh", RUN_FAILS)]
