"""Exit statuses of dirs -c, unalias, dash's refused export option; a bare declare -n; and a child shell's
prefix assignments. Each row was run under bash 5.2 / dash 0.5.12."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_of, run_script


@pytest.mark.parametrize(("script", "run", "placed"), [
    ("dirs -c || cp x.py /dest/\n", "bash i.sh", []),  # dirs -c succeeds
    ("unalias nope || cp x.py /dest/\nunalias nope && cp sub/y.py /dest/\n", "bash i.sh", ["/dest/x.py"]),
    ("(export -x A=1); cp x.py /dest/e$?.py\n", "dash i.sh", ["/dest/e2.py"]),  # dash refuses -x with 2
])
def test_builtin_exit_status(script: str, run: str, placed: list[str]) -> None:
    assert in_dest(run_script(script, run)) == placed


def test_unalias_of_a_missing_alias_fails_the_script() -> None:
    plan = run_script("unalias nope\n")
    assert notes_of(plan, "fails") and not notes_of(plan, "assumed")


@pytest.mark.parametrize("script", ["F=x.py bash j.sh\n", "F=x.py ./j.sh\n", "PATH=/w/s:$PATH\nF=x.py j.sh\n"])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_prefix_assignment_reaches_the_child_script(script: str, run: str) -> None:
    # bash 5.2 and dash 0.5.12: F is in the environment of the script, whether run by a shell, by its path or
    # found on PATH (an executable j.sh without '#!' is run by the shell as a script).
    plan = run_script(script, run, files={"s/j.sh": 'cp "$F" /dest/\n'})
    assert in_dest(plan) == ["/dest/x.py"]
    assert not notes_of(plan, "unread")


def test_bare_declare_n_is_read_without_a_note() -> None:
    plan = run_script("declare -n r\ncp x.py /dest/\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert plan.notes == ()
