"""Each file the image ships keeps the steps that put it there: the file, line and command of each.

A ``COPY`` brings a context file in; a command of a script (``cp``, or
``cat SRC > DEST`` and ``tee DEST < SRC``, which give DEST the bytes of
SRC) moves it on. The step names the command as the script ran it, less
its folder (``/usr/bin/cat`` is ``cat``), so a reviewer sees which line of
which script made the image's copy.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of, script_context


def steps(script: str, path: str) -> list[tuple[str, int, str]]:
    plan = plan_of(script_context(f"mkdir -p /made\n{script}\n"))
    return [(step.file, step.line, step.command) for step in plan.image[path].steps]


@pytest.mark.parametrize(("script", "command"), [
    ("cp x.py /made/paged_attn.py", "cp"),
    ("cat x.py > /made/paged_attn.py", "cat"),
    ("/usr/bin/cat < x.py > /made/paged_attn.py", "cat"),
    ("tee /made/paged_attn.py < x.py > /dev/null", "tee"),
    # The shell opens the redirections: under sudo, cat and tee still move x.py's bytes.
    ("sudo cat x.py > /made/paged_attn.py", "cat"),
    ("sudo tee /made/paged_attn.py < x.py > /dev/null", "tee"),
])
def test_a_copy_by_a_script_names_its_command_after_the_copy_in(script: str, command: str) -> None:
    assert steps(script, "/made/paged_attn.py") == [("Dockerfile", 3, "COPY"), ("s/i.sh", 2, command)]


def test_a_copy_by_a_file_the_runs_own_shell_sources_names_that_files_line() -> None:
    # RUN . ./i.sh: sh reads i.sh itself, so its cp is one of the RUN's commands, written on i.sh's line 2.
    plan = plan_of(script_context("mkdir -p /made\ncp x.py /made/a.py\n", run="cd /w/s && . ./i.sh"))
    assert [(step.file, step.line, step.command) for step in plan.image["/made/a.py"].steps] == [
        ("Dockerfile", 3, "COPY"), ("s/i.sh", 2, "cp")]
    assert plan.notes == ()
