"""cp, install, mv, ln and rsync as GNU coreutils run them: flags combined or long, folders, targets.

``cp`` copies a folder only with -r/-R/-a (else it fails and copies
nothing); ``-t DIR`` copies into DIR, ``-T`` makes DEST the copy itself,
``--`` ends the options; a copy into an existing folder lands inside it.
Options that change where files land and are not understood make the
command unread, never guessed.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, notes_of, plan_of, script_context

X, Y, Z = "s/x.py", "s/sub/y.py", "s/sub/deep/z.py"


def placed(script: str) -> dict[str, str]:
    """What the script placed outside its own folder: image path -> context file."""
    image = image_of(script_context(script))
    return {path: source for path, source in image.items() if not path.startswith("/w/s/")}


@pytest.mark.parametrize(("command", "expected"), [
    ("cp -rf sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp -av sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp -R sub /made", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
    ("cp --recursive sub /made/", {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}),
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


def test_cp_into_a_folder_that_already_holds_the_copy_merges_into_it() -> None:
    assert placed("mkdir /made\ncp -r sub /made\ncp -r sub /made\n") == {"/made/sub/y.py": Y, "/made/sub/deep/z.py": Z}


@pytest.mark.parametrize(("command", "expected"), [
    ("install -D x.py /opt/a/b/x.py", {"/opt/a/b/x.py": X}),
    ("install -D -m 0644 x.py /opt/a/", {"/opt/a/x.py": X}),
    ("install -m 644 x.py /made/mode.py", {"/made/mode.py": X}),
    ("install --mode=644 -o root -g root x.py /made/", {"/made/x.py": X}),
    ("install -t /made -m 0755 x.py sub/y.py", {"/made/x.py": X, "/made/y.py": Y}),
    ("install -Dt /opt/t x.py", {"/opt/t/x.py": X}),
    ("install -d /made/d && install x.py /made/d", {"/made/d/x.py": X}),
])
def test_install_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


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
])
def test_rsync_forms(command: str, expected: dict[str, str]) -> None:
    assert placed(f"mkdir /made\n{command}\n") == expected


def test_rm_removes_what_it_names_and_nothing_beside_it() -> None:
    assert placed("mkdir /made\ncp -r sub /made/sub\ncp -r sub /made/subway\nrm -rf /made/sub\n") == {
        "/made/subway/y.py": Y, "/made/subway/deep/z.py": Z}


@pytest.mark.parametrize(("command", "why"), [
    ("cp --attributes-only x.py /made/", "cp with --attributes-only"),
    ("cp -X x.py /made/", "cp with -X"),
    ("rsync -a --exclude='*.pyc' sub /made/", "rsync with --exclude=*.pyc"),
    ("ln --relative -s x.py /made/", "ln with --relative"),
    ("install --strip-program=x --bogus x.py /made/", "install with --bogus"),
])
def test_an_option_the_reader_does_not_know_makes_the_command_unread(command: str, why: str) -> None:
    plan = plan_of(script_context(f"mkdir /made\n{command}\n"))
    assert not any(path.startswith("/made/") for path in plan.image)
    (note,) = [n for n in plan.notes if n.kind == "unread"]
    assert (note.line, note.text) == (2, command) and note.reason.startswith(why)


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
