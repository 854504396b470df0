"""bash's own builtins under dash and under sh: dash has none of them, and the base image's sh may be either.

dash 0.5.12 has no ``pushd``, ``popd``, ``dirs``, ``shopt``, ``declare``,
``typeset``, ``mapfile``/``readarray``, ``builtin``, ``let``, ``caller``,
``enable`` or ``disown``: each is a command not found (status 127), and the
script reads on. Under ``sh`` (dash on Debian and Ubuntu, bash on RHEL-likes)
the reader runs the command as bash would and says that the base image
decides. Each row was run under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("declare D=/dest\ncp x.py ${D:-/dest/none}/d.py 2>/dev/null || cp x.py /dest/failed.py\n",
     ["/dest/d.py"], ["/dest/failed.py"]),
    ("typeset D=/dest/t\ncp x.py ${D:-/dest/u}.py\n", ["/dest/t.py"], ["/dest/u.py"]),
    ("pushd sub >/dev/null; cp y.py /dest/ 2>/dev/null; popd >/dev/null; cp x.py /dest/\n",
     ["/dest/x.py", "/dest/y.py"], ["/dest/x.py"]),
    ("dirs >/dev/null || cp x.py /dest/nodirs.py\n", [], ["/dest/nodirs.py"]),
    ("mapfile -t L < /dev/null || cp x.py /dest/nomap.py\n", [], ["/dest/nomap.py"]),
    ("builtin echo hi >/dev/null && cp x.py /dest/b.py\n", ["/dest/b.py"], []),
    ("let 'x = 2' 2>/dev/null\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"], ["/dest/s127.py"]),  # not found: 127
    ("shopt -s nullglob 2>/dev/null; cp x.py /dest/$?.py\n", ["/dest/0.py"], ["/dest/127.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_bash_builtin_is_not_found_under_dash(script: str, bash: list[str], dash: list[str], shell: str) -> None:
    assert in_dest(run_script(script, f"{shell} i.sh")) == (bash if shell == "bash" else dash)


def test_dash_says_which_command_it_does_not_have() -> None:
    plan = run_script("declare D=/dest\ncp x.py /dest/after.py\n", "dash i.sh")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("fails", 1, "dash has no 'declare' command: it is not found (status 127)")]


@pytest.mark.parametrize("command", ["declare D=/dest", "typeset D=/dest", "pushd /dest", "builtin cd /dest"])
def test_under_sh_a_bash_builtin_is_run_and_said_to_depend_on_the_image(command: str) -> None:
    plan = run_script(f"{command}\ncp /w/s/x.py /dest/after.py\n", "sh i.sh")
    name = command.split()[0]
    assert in_dest(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 1, f"the base image's sh decides: bash runs '{name}', dash has no such command (status 127); "
                       "the reader runs it")]
