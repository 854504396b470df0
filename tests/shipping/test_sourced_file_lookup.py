"""``. FILE`` and ``source FILE`` find FILE as the shell running the script would.

A FILE with a ``/`` is that path. A bare name is looked for on PATH; only
bash (run as bash, not as ``sh``) then tries the current folder. So under
``sh`` (dash, or bash as sh) ``. lib.sh`` beside the script is not found:
``.`` is a special builtin and its failure ends the script, while a failed
``source`` only fails and the script reads on. dash has no ``source``.
The vendor's ``patch_ops.sh`` has no ``#!`` line and is run as
``./patch_ops.sh``, so it runs under the image's ``/bin/sh``.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of, script_context

LIB = {"s/lib.sh": "cp x.py /lib.py\n"}


def outcome(script: str, run: str = "cd /w/s && ./i.sh") -> tuple[list[str], list[tuple[str, int, str]]]:
    """The image paths the script placed outside its own folder, and each note's (kind, line, reason)."""
    plan = plan_of(script_context(script, run=run, files=LIB))
    return (sorted(path for path in plan.image if not path.startswith("/w/")),
            [(n.kind, n.line, n.reason) for n in plan.notes])


@pytest.mark.parametrize(("script", "run"), [
    (". ./lib.sh\ncp x.py /after.py\n", "cd /w/s && ./i.sh"),
    (". /w/s/lib.sh\ncp x.py /after.py\n", "cd /w/s && ./i.sh"),
    # bash, run as bash, tries the current folder after PATH.
    (". lib.sh\ncp x.py /after.py\n", "cd /w/s && bash i.sh"),
    ("#!/bin/bash\nsource lib.sh\ncp x.py /after.py\n", "cd /w/s && ./i.sh"),
    # A folder the build put first on PATH is searched before the base image's own.
    ("PATH=/w/s:$PATH\n. lib.sh\ncp x.py /after.py\n", "cd /w/s && ./i.sh"),
    ("export PATH=/w/s\n. lib.sh\ncp x.py /after.py\n", "cd /w/s && ./i.sh"),
])
def test_a_file_the_shell_finds_is_read_in_place(script: str, run: str) -> None:
    assert outcome(script, run) == (["/after.py", "/lib.py"], [])


def test_under_sh_a_dot_that_finds_no_file_on_path_ends_the_script_and_fails_the_run() -> None:
    placed, notes = outcome(". lib.sh\ncp x.py /after.py\n")
    assert placed == []
    assert notes == [
        ("fails", 1, "sh looks for lib.sh on PATH only, not in the current folder: the script stops here (unless "
                     "the base image has a lib.sh on its PATH)"),
        ("fails", 4, "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted "
                     "before it)")]


def test_under_sh_a_source_that_finds_no_file_on_path_fails_and_the_script_reads_on() -> None:
    assert outcome("source lib.sh\ncp x.py /after.py\n") == (["/after.py"], [
        ("fails", 1, "sh looks for lib.sh on PATH only, not in the current folder: the script reads on without it "
                     "(unless the base image has a lib.sh on its PATH)")])
    # With set -e, that failure ends the script.
    placed, notes = outcome("set -e\nsource lib.sh\ncp x.py /after.py\n")
    assert placed == [] and notes[0][:2] == ("fails", 2)


def test_a_file_found_only_past_the_base_images_path_is_read_as_an_assumption() -> None:
    assert outcome("PATH=$PATH:/w/s\n. lib.sh\ncp x.py /after.py\n") == (["/after.py", "/lib.py"], [
        ("assumed", 2, "lib.sh is taken to be /w/s/lib.sh, which the build put on PATH (a folder of the base "
                       "image's PATH, searched first, could hold another)")])


def test_source_under_sh_depends_on_which_shell_the_image_has_and_dash_has_none() -> None:
    assert outcome("source ./lib.sh\ncp x.py /after.py\n") == (["/after.py", "/lib.py"], [
        ("assumed", 1, "the base image's sh decides: bash reads ./lib.sh, dash has no 'source' and reads on without "
                       "it; the reader reads it")])
    assert outcome("#!/bin/dash\nsource ./lib.sh\ncp x.py /after.py\n") == (["/after.py"], [
        ("fails", 2, "dash has no 'source' command: the script reads on without ./lib.sh")])


def test_a_file_read_in_place_again_and_again_is_read_every_time() -> None:
    # A file read in place nests only while it is read: a loop that reads one per component reads them all.
    components = [f"c{n}" for n in range(20)]
    plan = plan_of(script_context(f"for c in {' '.join(components)}; do\n  . ./component.sh\ndone\n",
                                  files={"s/component.sh": "cp x.py \"/opt/$c.py\"\n"}))
    assert sorted(path for path in plan.image if path.startswith("/opt/")) == sorted(f"/opt/{c}.py" for c in components)
    assert plan.notes == ()


def deepest_level(script: str, files: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """The highest level a self-repeating script copied to (/opt/LEVEL.py), and the kinds of its notes."""
    plan = plan_of(script_context(script, files=files))
    return max(int(path[5:-3]) for path in plan.image if path.startswith("/opt/")), [n.kind for n in plan.notes]


def test_a_file_that_reads_itself_in_place_nests_as_deep_as_a_function_that_calls_itself() -> None:
    # An env file that sources itself (a missing include guard) never ends in sh; the reader follows it as deep
    # as any other nesting (scripts, functions, eval and . share one bound), then leaves the rest unread.
    sourced = deepest_level("n=0\n. ./env.sh\n",
                            {"s/env.sh": "n=$((n+1))\ncp x.py /opt/$n.py\n. ./env.sh\n"})
    called = deepest_level("n=0\nsetup() { n=$((n+1)); cp x.py /opt/$n.py; setup; }\nsetup\n")
    assert sourced == called
    assert sourced[0] > 10 and sourced[1] == ["unread"]


def test_under_dash_a_source_fails_so_the_fallback_after_its_or_runs() -> None:
    # dash says "source: not found" (status 127): the command after '||' runs (dash 0.5.12).
    assert outcome("#!/bin/dash\nsource ./lib.sh || cp x.py /fallback.py\n") == (["/fallback.py"], [
        ("fails", 2, "dash has no 'source' command: the script reads on without ./lib.sh")])


@pytest.mark.parametrize(("script", "run", "placed"), [
    # bash 5.2: "./nothere.sh: No such file or directory", status 1, and it reads on
    ("source ./nothere.sh\ncp x.py /opt/after$?.py\n", "bash i.sh", ["/opt/after1.py"]),
    (". ./nothere.sh || cp x.py /opt/or$?.py\n", "bash i.sh", ["/opt/or1.py"]),
    # dash 0.5.12: ".: cannot open ./nothere.sh": the script ends (status 2); bash in POSIX mode ends it too
    (". ./nothere.sh || cp x.py /opt/or$?.py\ncp x.py /opt/after.py\n", "dash i.sh", []),
    ("source ./nothere.sh\ncp x.py /opt/after.py\n", "bash --posix i.sh", []),
    (". ./nothere.sh\n", "dash i.sh; cp x.py /opt/status$?.py", ["/opt/status2.py"]),
    ("source ./nothere.sh\n", "bash --posix i.sh; cp x.py /opt/status$?.py", ["/opt/status1.py"]),
    # dash has no source: "source: not found", status 127
    ("source ./nothere.sh\ncp x.py /opt/after$?.py\n", "dash i.sh", ["/opt/after127.py"]),
])
def test_reading_a_file_the_build_never_made_into_the_shell_fails_as_the_shell_fails_it(
        script: str, run: str, placed: list[str]) -> None:
    plan = plan_of(script_context(script, run=f"cd /w/s && {run}"))
    assert sorted(p for p in plan.image if p.startswith("/opt/")) == placed


def test_under_sh_reading_a_missing_file_is_the_base_images_shell_to_decide() -> None:
    plan = plan_of(script_context(". ./nothere.sh\ncp x.py /opt/after.py\n", run="cd /w/s && sh i.sh"))
    assert "/opt/after.py" in plan.image
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1), ("assumed", 1)]
