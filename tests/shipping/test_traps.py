"""``trap``: an EXIT trap runs when its shell ends, bash's ERR trap when a command fails as set -e sees it.

Install scripts clean up with ``trap 'rm -rf "$TMP"' EXIT``: what the trap
removes is gone from the image, however the script ends (at its last line,
at ``exit``, or on a failure under ``set -e``), and its ``$?`` is the
status the shell was ending with. A trap runs once, in the shell that set
it: a subshell (``( )``, ``$(...)``, a pipe's part) starts without the
traps and runs its own when it ends; ``exec`` replaces the shell and its
traps. ``trap - EXIT``, ``trap EXIT``, ``trap 0`` reset; ``trap '' EXIT``
ignores. Signal traps never run in a build. bash's ERR trap runs where set
-e would end the shell (not in a condition, left of ``||``, or inside a
function without ``set -E``); dash refuses ERR. Each answer was checked with
bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "placed"), [
    ("cp x.py /dest/x.py\ntrap 'rm -f /dest/x.py' EXIT\n", []),
    ("trap 'rm -f /dest/x.py' EXIT\ncp x.py /dest/x.py\n", []),  # it runs at the end, after the copy
    ("trap 'cp x.py /dest/a.py' EXIT\nexit 3\n", ["/dest/a.py"]),
    ("set -e\ntrap 'cp x.py /dest/a.py' EXIT\nfalse\ncp x.py /dest/b.py\n", ["/dest/a.py"]),
    ("trap 'cp x.py /dest/$?.py' EXIT\nfalse\n", ["/dest/1.py"]),  # $? is the status the shell ends with
    ("cleanup() { cp x.py /dest/c.py; }\ntrap cleanup EXIT\necho hi\n", ["/dest/c.py"]),
    ("f() { trap 'cp x.py /dest/f.py' EXIT; }\nf\necho hi\n", ["/dest/f.py"]),  # set in a function: the shell's
    ("trap 'cp x.py /dest/a.py' EXIT INT TERM\n", ["/dest/a.py"]),
    ("trap 'cp x.py /dest/a.py' exit\n", ["/dest/a.py"]),  # the name in any case
    ("trap -- 'cp x.py /dest/a.py' EXIT\n", ["/dest/a.py"]),  # '--' ends the options: the action follows it
    ("trap -- 'cp x.py /dest/a.py' EXIT\ntrap -- - EXIT\n", []),
    ("trap 'cp x.py /dest/a.py' INT TERM HUP\n", []),  # no signal reaches a build's shell
    ("trap 'cp x.py /dest/a.py' EXIT\ntrap - EXIT\n", []),
    ("trap 'cp x.py /dest/a.py' EXIT\ntrap EXIT\n", []),
    ("trap 'cp x.py /dest/a.py' 0\ntrap 0\n", []),
    ("trap 'cp x.py /dest/a.py' EXIT\ntrap '' EXIT\n", []),
    ("trap 'cp x.py /dest/a.py' EXIT\nexec true\n", []),  # exec replaces the shell and its traps
    ("trap 'cp x.py /dest/a.py' EXIT\n(exit 1)\n", ["/dest/a.py"]),  # the subshell's end is not the shell's
    ("(trap 'cp x.py /dest/s.py' EXIT; true)\ncp x.py /dest/m.py\n", ["/dest/m.py", "/dest/s.py"]),
    ("v=$(trap 'cp x.py /dest/s.py' EXIT; echo hi)\ncp x.py /dest/$v.py\n", ["/dest/hi.py", "/dest/s.py"]),
    ("trap 'cp x.py /dest/a.py' EXIT | cat\n", ["/dest/a.py"]),  # a pipe's part is a subshell that ends
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_an_exit_trap_runs_when_its_shell_ends(script: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(script, run)) == placed


@pytest.mark.parametrize(("script", "placed"), [
    ("trap 'exit 0' EXIT\nset -e\nfalse\n", []),  # the trap's exit is the shell's status
    ("set -e\ntrap 'cp x.py /dest/a.py; false; cp x.py /dest/b.py' EXIT\ntrue\n", ["/dest/a.py"]),  # set -e holds in it
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_an_exit_trap_runs_under_the_shells_options(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed
    stopped = any(n.kind == "fails" and "'docker build' stops" in n.reason for n in plan.notes)
    assert stopped is ("false;" in script)  # bash and dash exit 1 from the second, 0 from the first


@pytest.mark.parametrize(("script", "placed"), [
    ("trap 'cp x.py /dest/e.py; exit 1' ERR\nfalse\ncp x.py /dest/after.py\n", ["/dest/e.py"]),
    ("trap 'cp x.py /dest/e.py' ERR\nfalse\ncp x.py /dest/after.py\n", ["/dest/after.py", "/dest/e.py"]),
    ("trap 'cp x.py /dest/e.py' ERR\nif false; then :; fi\nfalse || true\n! false\n", []),
    ("trap 'cp x.py /dest/e.py' ERR\nf() { false; cp x.py /dest/inf.py; }\nf\n", ["/dest/inf.py"]),
    ("set -E\ntrap 'cp x.py /dest/e.py' ERR\nf() { false; cp x.py /dest/inf.py; }\nf\n",
     ["/dest/e.py", "/dest/inf.py"]),
    ("trap 'cp x.py /dest/e.py' ERR\n(false)\n", ["/dest/e.py"]),
    ("trap 'cp x.py /dest/e.py' ERR\n(false; true)\n", []),  # the subshell does not have the trap
    ("set -E\ntrap 'cp x.py /dest/e.py' ERR\n(false; true)\n", ["/dest/e.py"]),  # set -E: it does
    # A failure inside the trap's own action runs no ERR trap: it runs once, and the script goes on.
    ("trap 'cp x.py /dest/e.py; false' ERR\nfalse\ncp x.py /dest/next.py\n", ["/dest/e.py", "/dest/next.py"]),
    ("trap false ERR\nfalse\ncp x.py /dest/x.py\n", ["/dest/x.py"]),
])
def test_bashs_err_trap_runs_where_set_e_would_end_the_shell(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


def test_dash_refuses_an_err_trap() -> None:
    plan = run_script("trap 'cp x.py /dest/e.py' ERR || cp x.py /dest/refused.py\nfalse\n", "dash i.sh")
    assert in_dest(plan) == ["/dest/refused.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.line == 1] == [
        ("fails", 1, "trap: ERR is not a condition dash knows")]


def test_an_err_trap_under_sh_is_unread_as_only_bash_has_it() -> None:
    plan = run_script("trap 'cp x.py /dest/e.py' ERR\nfalse\n", "sh i.sh")
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.kind == "unread"] == [
        ("unread", 1, "trap ... ERR under the base image's sh: dash refuses it, bash as sh runs it when a command "
                      "fails, as the reader does")]
    assert in_dest(plan) == ["/dest/e.py"]  # read on as bash as sh runs it


@pytest.mark.parametrize("condition", ["DEBUG", "RETURN"])
def test_a_trap_around_every_command_is_unread(condition: str) -> None:
    plan = run_script(f"trap 'rm -f /dest/x.py' {condition}\ncp x.py /dest/x.py\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, f"a {condition} trap runs its action around every command or function, which the reader "
                      "does not follow")]


def test_a_trap_around_every_function_still_sets_the_exit_trap_named_with_it() -> None:
    # bash 5.2: no function returns here, so only the EXIT trap runs its action.
    plan = run_script("trap 'cp x.py /dest/a.py' RETURN EXIT\n")
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 1)]


@pytest.mark.parametrize(("run", "placed"), [("bash i.sh", ["/dest/x.py"]), ("dash i.sh", [])])
def test_a_signal_named_with_sig_is_bash_s_spelling(run: str, placed: list[str]) -> None:
    # bash 5.2 takes SIGTERM for TERM (a trap that never runs in a build); dash 0.5.12 says
    # "trap: SIGTERM: bad trap" and fails the command.
    plan = run_script("trap 'echo hi' SIGTERM || exit 1\ncp x.py /dest/\n", run)
    assert in_dest(plan) == placed


@pytest.mark.parametrize(("conditions", "placed"), [
    ("FOO EXIT", ["/dest/failed.py"]), ("SIGINT EXIT", ["/dest/failed.py"]),  # dash knows no SIG prefix
    ("EXIT FOO", ["/dest/a.py", "/dest/failed.py"]),
])
def test_dash_sets_no_condition_after_one_it_does_not_know(conditions: str, placed: list[str]) -> None:
    # dash 0.5.12: "trap: FOO: bad trap", status 1; the conditions before it are set, none after.
    plan = run_script(f"trap 'cp x.py /dest/a.py' {conditions} || cp x.py /dest/failed.py\n", "dash i.sh")
    assert in_dest(plan) == placed


def test_bash_sets_the_conditions_it_knows_after_one_it_does_not() -> None:
    # bash 5.2: "trap: FOO: invalid signal specification", status 1, and the EXIT trap after it is set.
    plan = run_script("trap 'cp x.py /dest/a.py' FOO EXIT || cp x.py /dest/failed.py\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/a.py", "/dest/failed.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("fails", 1, "trap: FOO is not a condition bash knows")]


@pytest.mark.parametrize(("script", "code"), [
    ("exit 2\n", "2"), ("(exit 3)\n", "3"), ("false\n", "1"), ("true\n", "0"), ("exit\n", "0"),
    ("set -e\n(exit 4)\ncp x.py /dest/not_reached.py\n", "4"), ("set -e\nf() { return 7; }\nf\n", "7"),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_an_exit_traps_status_is_the_number_the_shell_ends_with(script: str, code: str, run: str) -> None:
    # bash 5.2 and dash 0.5.12: $? in the EXIT trap is the shell's exit status, the failed command's under set -e.
    assert in_dest(run_script(f"trap 'cp x.py /dest/t$?.py' EXIT\n{script}", run)) == [f"/dest/t{code}.py"]


def test_dash_ends_with_status_2_on_a_special_builtins_error_and_its_exit_trap_says_so() -> None:
    assert in_dest(run_script("trap 'cp x.py /dest/t$?.py' EXIT\nexport 1x=3\n", "dash i.sh")) == ["/dest/t2.py"]
