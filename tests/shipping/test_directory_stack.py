"""cd, pushd, popd and ``cd -`` keep a real directory stack; a cd into a folder that is not there stops the reading.

A cd into a folder the reader cannot name, taken to succeed (``cd "$D" || exit``), leaves absolute paths read;
the first relative path, script, ``pushd``, ``pwd`` or ``$PWD`` after it stops the reading.

After a cd that fails, sh goes on in the old directory (or stops, under
set -e): either way the rest of the script is not what it says, so the
reader stops there with a note instead of guessing.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, in_dest, notes_of, plan_of, run_script, script_context


def installed(script: str, **files: str) -> dict[str, str]:
    """Image path -> context file, for what the script itself placed (outside /w/s)."""
    image = image_of(script_context(script, files={f"s/{k}": v for k, v in files.items()}))
    return {path: source for path, source in image.items() if not path.startswith("/w/s/")}


def test_pushd_and_popd_nest() -> None:
    assert installed("pushd sub\npushd deep\ncp z.py /d1/\npopd\ncp y.py /d2/\npopd\ncp x.py /d3/\n") == {
        "/d1/z.py": "s/sub/deep/z.py", "/d2/y.py": "s/sub/y.py", "/d3/x.py": "s/x.py"}


def test_pushd_without_a_folder_swaps_the_top_two() -> None:
    assert installed("pushd sub\npushd /w/s/sub/deep\npushd\ncp y.py /a/\npushd\ncp z.py /b/\n") == {
        "/a/y.py": "s/sub/y.py", "/b/z.py": "s/sub/deep/z.py"}


def test_pushd_without_a_folder_succeeds_under_set_e() -> None:
    # It swaps the top two and returns 0: set -e reads on, and '&&' runs what follows.
    assert installed("set -e\npushd sub >/dev/null\npushd >/dev/null && cp x.py /a/\ncp x.py /b/\n") == {
        "/a/x.py": "s/x.py", "/b/x.py": "s/x.py"}


def test_cd_dash_goes_back_to_oldpwd() -> None:
    assert installed("cd sub\ncd /w/s\ncd -\ncp y.py /d/\ncp \"$OLDPWD/x.py\" /e/\n") == {
        "/d/y.py": "s/sub/y.py", "/e/x.py": "s/x.py"}


@pytest.mark.parametrize("script", [
    "cd -- sub\ncp y.py /d/\n",
    "cd -P -- sub\ncp y.py /d/\n",
    "cd -L sub/deep\ncd -Pe ..\ncp y.py /d/\n",
    "pushd -- sub >/dev/null\ncp y.py /d/\n",
    # The idiom for the script's own folder, written with '--' and bash's BASH_SOURCE.
    'D="$( cd -- "$( dirname -- "${BASH_SOURCE[0]:-$0}"; )" &> /dev/null && pwd 2> /dev/null; )"\n'
    'cd "$D/sub" && cp y.py /d/\n',
])
def test_cd_options_and_a_double_dash_come_before_the_folder(script: str) -> None:
    assert installed(script) == {"/d/y.py": "s/sub/y.py"}


def test_cd_into_a_base_image_folder_is_followed() -> None:
    # The base image's folders are not known; a cd there is taken to work.
    assert installed("cd /usr/lib/python3/dist-packages\ncp /w/s/x.py vllm/x.py\n") == {
        "/usr/lib/python3/dist-packages/vllm/x.py": "s/x.py"}


def test_cd_with_an_option_it_does_not_have_fails_and_the_directory_stays() -> None:
    # bash: "cd: -X: invalid option", dash: "cd: Illegal option -X"; both go on in the same folder.
    plan = plan_of(script_context("cd -X sub || true\ncp x.py /d/\n"))
    assert "/d/x.py" in plan.image
    assert notes_of(plan, "fails") == [("s/i.sh", 1, "cd -X sub")]


def test_popd_on_an_empty_stack_fails_and_the_directory_stays() -> None:
    plan = plan_of(script_context("cd sub\npopd\ncp y.py /d/\n"))
    assert "/d/y.py" in plan.image
    assert notes_of(plan, "fails") == [("s/i.sh", 2, "popd")]


def test_popd_on_an_empty_stack_returns_a_failure_status() -> None:
    # bash: "popd: directory stack empty", status 1: the '||' fallback runs, in the folder it was in.
    assert installed("#!/bin/bash\ncd sub\npopd 2>/dev/null || cp y.py /d/\n") == {"/d/y.py": "s/sub/y.py"}


def test_dirs_and_the_directory_a_subshell_changes_stay_apart() -> None:
    assert installed("(cd sub && cp y.py /in/)\ncp x.py /out/\n") == {"/in/y.py": "s/sub/y.py", "/out/x.py": "s/x.py"}


def test_the_scripts_own_folder_from_dollar_zero() -> None:
    context = script_context('cd "$(dirname "$0")"\nHERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
                             'cd /\ncp "$HERE/x.py" /d/\ncp "${0%/*}/sub/y.py" /e/\n', run="bash /w/s/i.sh")
    image = image_of(context)
    assert image["/d/x.py"] == "s/x.py" and image["/e/y.py"] == "s/sub/y.py"


@pytest.mark.parametrize("cd", ["cd nothere", "cd ./x.py", "pushd /w/s/missing", "cd sub/deep/deeper"])
def test_cd_into_a_folder_that_is_not_there_stops_the_reading(cd: str) -> None:
    plan = plan_of(script_context(f"cp x.py /before/\n{cd}\ncp x.py /after/\n"))
    assert "/before/x.py" in plan.image and "/after/x.py" not in plan.image
    (note,) = [n for n in plan.notes if n.kind == "stop"]
    assert (note.file, note.line, note.text) == ("s/i.sh", 2, cd)
    assert "the rest of s/i.sh is not read" in note.reason


def test_a_cd_whose_failure_the_script_handles_is_followed() -> None:
    plan = plan_of(script_context("cd nothere && cp x.py /never/\ncd nothere || cd sub\ncp y.py /d/\n"
                                  "if cd missing; then cp x.py /no/; fi\ncp y.py /e/\n"))
    assert "/never/x.py" not in plan.image and "/no/x.py" not in plan.image
    assert plan.image["/d/y.py"].source == "s/sub/y.py" and plan.image["/e/y.py"].source == "s/sub/y.py"
    assert not [n for n in plan.notes if n.kind == "stop"]


def test_a_pushd_whose_failure_the_script_handles_is_followed() -> None:
    plan = plan_of(script_context("pushd plugins > /dev/null && cp x.py /never/\npushd sub > /dev/null || exit 1\n"
                                  "cp y.py /d/\n"))
    assert "/never/x.py" not in plan.image and plan.image["/d/y.py"].source == "s/sub/y.py"
    assert not [n for n in plan.notes if n.kind == "stop"]


def test_cd_into_a_folder_named_by_an_unknown_value_stops_the_reading() -> None:
    plan = plan_of(script_context('cd "$SOMEWHERE"\ncp x.py /after/\n'))
    assert "/after/x.py" not in plan.image
    assert notes_of(plan, "stop") == [("s/i.sh", 1, 'cd "$SOMEWHERE"')]


def test_a_run_line_whose_cd_fails_fails_the_build() -> None:
    # 'cd DIR && cp ...': the cd fails, the cp is skipped, and the RUN's status is the cd's: docker build stops.
    files = {"Dockerfile": "FROM base\nRUN mkdir /w\nCOPY s /w/s\nRUN cd /w/nothere && cp /w/s/x.py /a/\n",
             "s/x.py": ""}
    plan = plan_of(files)
    assert "/a/x.py" not in plan.image
    (note,) = plan.notes
    assert (note.file, note.line, note.kind) == ("Dockerfile", 4, "fails")
    assert "'docker build' stops here" in note.reason


def test_a_dockerfile_run_that_cds_into_a_missing_folder_stops_that_run_only() -> None:
    files = {"Dockerfile": "FROM base\nRUN mkdir /w\nCOPY s /w/s\nRUN cd /w/nothere; cp /w/s/x.py /a/\n"
                           "RUN cp /w/s/x.py /b/\n", "s/x.py": ""}
    plan = plan_of(files)
    assert "/b/x.py" in plan.image and "/a/x.py" not in plan.image
    assert [(n.file, n.line, n.kind) for n in plan.notes] == [("Dockerfile", 4, "stop")]


@pytest.mark.parametrize(("run", "option"), [("bash i.sh", "-@"), ("bash i.sh", "-LPe@"), ("dash i.sh", "-e"),
                                             ("dash i.sh", "-Pe"), ("dash i.sh", "-@")])
def test_cd_with_an_option_this_shell_does_not_have_fails_and_the_directory_stays(run: str, option: str) -> None:
    # bash 5.2 on Linux: "cd: -@: invalid option"; dash 0.5.12 has only -L and -P ("Illegal option -e"); status 2.
    plan = run_script(f"cd {option} sub || cp /w/s/x.py /dest/failed$?.py\ncp x.py /dest/here.py\n", run)
    assert in_dest(plan) == ["/dest/failed2.py", "/dest/here.py"]


# A cd into a folder the reader cannot work out, which a test of it takes to succeed: bash and dash go there.
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_cd_the_reader_cannot_work_out_in_a_condition_is_taken_to_succeed(run: str) -> None:
    # The image's python3 prints "sub": cd succeeds, the branch runs.
    plan = run_script("if cd \"$(python3 -c 'print(\"sub\")')\"; then cp /w/s/x.py /dest/in; fi\n"
                      "cp /w/s/x.py /dest/after\n", run=run)
    assert in_dest(plan) == ["/dest/after", "/dest/in"]
    assert [n.kind for n in plan.notes if n.kind in ("stop", "fails")] == []


def test_after_a_cd_the_reader_cannot_work_out_relative_paths_are_not_read_from_the_old_folder() -> None:
    # bash copies sub/y.py; the reader cannot name the folder, so it stops where a relative path needs it.
    plan = run_script("if cd \"$(python3 -c 'print(\"sub\")')\"; then cp y.py /dest/; fi\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 1, "cd into $(python3 -c 'print(\"sub\")'), which the reader cannot work out, was taken to succeed: "
                    "what y.py names from there is not known, and the rest of s/i.sh is not read")]


@pytest.mark.parametrize(("script", "placed"), [
    # Absolute paths mean the same from any folder: read on until a relative one.
    ('cd "$D" || exit 1\ncp /w/s/x.py /dest/abs\ncp y.py /dest/\ncp /w/s/x.py /dest/never\n', ["/dest/abs"]),
    # A cd to a folder the reader knows, cd - (back where it was) and popd end the unknown.
    ('cd "$D" || true\ncd /w/s\ncp x.py /dest/known\n', ["/dest/known"]),
    ('if cd "$D"; then cd -; cp x.py /dest/back; fi\n', ["/dest/back"]),
    ('pushd /w/s/sub >/dev/null\ncd "$D" || true\npopd >/dev/null\ncp x.py /dest/popped\n', ["/dest/popped"]),
    # $PWD and pwd name the unknown folder: a path built from them is unread, not the old folder's.
    ('cd "$D" || exit 1\ncp /w/s/x.py "/dest/p$(pwd)"\ncp /w/s/x.py "/dest/q$PWD"\ncp /w/s/x.py /dest/r\n',
     ["/dest/r"]),
    # A script run from there starts in it: the reading stops before it.
    ('cd "$D" || exit 1\nsh ./j.sh\ncp /w/s/x.py /dest/after\n', []),
    ('cd "$D" || exit 1\npushd /w/s\ncp /w/s/x.py /dest/pushed\n', []),
    # After two such cds, OLDPWD is the first folder: set, though unknown. cd - goes there (bash and dash), so
    # it is taken to succeed too, and $OLDPWD in a path is unread.
    ('cd "$D" || exit 1\ncd "$E" || exit 1\ncd - >/dev/null || cp /w/s/x.py /dest/failed\ncp /w/s/x.py /dest/after\n',
     ["/dest/after"]),
    ('cd "$D" || exit 1\ncd "$E" || exit 1\ncp /w/s/x.py "/dest/o$OLDPWD"\ncp /w/s/x.py /dest/after\n', ["/dest/after"]),
])
def test_after_a_cd_the_reader_cannot_work_out_it_reads_on_only_what_needs_no_folder(script: str,
                                                                                   placed: list[str]) -> None:
    plan = run_script(script, files={"s/j.sh": "cp /w/s/x.py /dest/j\n"})
    assert in_dest(plan) == placed
    assert not [n for n in plan.notes if n.kind == "fails"]
