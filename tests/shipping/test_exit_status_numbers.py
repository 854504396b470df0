"""``$?`` is the number the last command ended with: ``exit N``, ``return N``, a subshell's or a child shell's.

Where a command says which number it fails with (``exit 3``, ``return 2``,
``(exit 4)``, ``sh -c 'exit 3'``, a function whose last command did), ``$?``
is that number, modulo 256; a pipe's is its last part's (a ``!`` makes it 0
or 1). Where only whether it failed is known (``false``, ``cp``, ``test``),
``$?`` is 0 or 1. Every row was run under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

BOTH = ["bash i.sh", "dash i.sh"]


@pytest.mark.parametrize(("script", "placed"), [
    ("sh -c 'exit 3' || cp x.py /dest/e$?.py\n", "/dest/e3.py"),
    ("(exit 4); cp x.py /dest/s$?.py\n", "/dest/s4.py"),
    ("f() { return 2; }; f; cp x.py /dest/r$?.py\n", "/dest/r2.py"),
    ("f() { (exit 5); }; f; cp x.py /dest/f$?.py\n", "/dest/f5.py"),  # a function's status is its last command's
    ("f() { return 2; }; ! f; cp x.py /dest/n$?.py\n", "/dest/n0.py"),
    ("f() { return 2; }; f | cat; cp x.py /dest/p$?.py\n", "/dest/p0.py"),  # a pipe's is its last part's
    ("printf 'exit 4\\n' | sh; cp x.py /dest/pp$?.py\n", "/dest/pp4.py"),
    ("echo hi | { cat >/dev/null; exit 6; }; cp x.py /dest/pg$?.py\n", "/dest/pg6.py"),
    ("exit_with() { return $1; }; exit_with 7 || { rc=$?; cp x.py /dest/rc$rc.py; }\n", "/dest/rc7.py"),
    ("sh -c 'sh -c \"exit 6\"'; cp x.py /dest/nest$?.py\n", "/dest/nest6.py"),
    ("(exit 256); cp x.py /dest/m$?.py\n", "/dest/m0.py"),
    ("(exit 3); (exit); cp x.py /dest/again$?.py\n", "/dest/again3.py"),  # exit alone repeats the last number
    ("f() { false; }; f; cp x.py /dest/ff$?.py\n", "/dest/ff1.py"),
    ("f() { return 3; }; if f; then :; fi; cp x.py /dest/if$?.py\n", "/dest/if0.py"),
    ("f() { return 3; }; f; g() { return; }; f; g; cp x.py /dest/g$?.py\n", "/dest/g3.py"),
    ("sh -c 'exit 3'; case $? in 3) cp x.py /dest/three.py;; *) cp x.py /dest/other.py;; esac\n", "/dest/three.py"),
    ("(exit 2); [ $? -eq 2 ] && cp x.py /dest/eq.py\n", "/dest/eq.py"),
    # An assignment alone has its (last) command substitution's number.
    ("V=$(exit 3)\ncp x.py /dest/as$?.py\n", "/dest/as3.py"),
    ("V=$(sh -c 'exit 4')\ncp x.py /dest/ac$?.py\n", "/dest/ac4.py"),
    ("V=$(exit 3) W=$(exit 5)\ncp x.py /dest/al$?.py\n", "/dest/al5.py"),
])
@pytest.mark.parametrize("run", BOTH)
def test_dollar_question_is_the_number_the_last_command_ended_with(script: str, placed: str, run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == [placed] and plan.notes == ()


@pytest.mark.parametrize("run", BOTH)
def test_a_script_ends_with_the_number_its_exit_gives(run: str) -> None:
    plan = run_script("sh sub/e.sh; cp x.py /dest/e$?.py\n", run, files={"s/sub/e.sh": "cp x.py /dest/in.py\nexit 9\n"})
    assert in_dest(plan) == ["/dest/e9.py", "/dest/in.py"]


@pytest.mark.parametrize(("command", "status"), [
    ("./nothere.sh", "127"), ("/dest/none", "127"),  # "not found"
    ("./sub", "126"), ("/dest", "126"),  # a folder: "Permission denied" (bash: "Is a directory")
])
@pytest.mark.parametrize("run", BOTH)
def test_running_a_path_where_the_build_made_no_program_fails_with_the_shells_status(command: str, status: str,
                                                                                      run: str) -> None:
    plan = run_script(f"{command}\ncp x.py /dest/after$?.py\n", run)
    assert in_dest(plan) == [f"/dest/after{status}.py"]
    assert [n.kind for n in plan.notes] == ["fails"]
