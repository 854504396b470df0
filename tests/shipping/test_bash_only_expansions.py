"""bash's own parameter expansions under dash and under sh.

dash 0.5.12 has no ``${V:OFFSET:LENGTH}``, ``${V^}``/``${V,,}``,
``${V/PATTERN/STRING}``, ``${!V}`` or ``${A[0]}``: it parses them, and
expanding one is "Bad substitution", which ends the shell with status 2,
whatever ``||`` or ``if`` say; a branch that never expands it is fine, and
in ``$(...)`` only the substitution's subshell ends. Under ``sh`` the base
image decides (dash on Debian and Ubuntu): the reader expands as bash does
and says so. Each row was run under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("cp x.py /dest/a.py\nf=hello\ncp x.py /dest/${f:1:3}.py\ncp x.py /dest/b.py\n",
     ["/dest/a.py", "/dest/b.py", "/dest/ell.py"], ["/dest/a.py"]),
    ("f=hello\ncp x.py /dest/${f^}.py || cp x.py /dest/failed.py\ncp x.py /dest/b.py\n",
     ["/dest/Hello.py", "/dest/b.py"], []),
    ("f=a-b\nif cp x.py /dest/${f//-/_}.py; then :; fi\ncp x.py /dest/b.py\n", ["/dest/a_b.py", "/dest/b.py"], []),
    ("f=x\ng=f\ncp x.py /dest/${!g}.py\ncp x.py /dest/b.py\n", ["/dest/b.py", "/dest/x.py"], []),
    ("a=q\ncp x.py /dest/${a[0]}.py\ncp x.py /dest/b.py\n", ["/dest/b.py", "/dest/q.py"], []),
    # Only where it is expanded: a branch not taken, a function not called.
    ("f=h\nif false; then cp x.py /dest/${f^}.py; fi\ng() { cp x.py /dest/${f^^}.py; }\ncp x.py /dest/b.py\n",
     ["/dest/b.py"], ["/dest/b.py"]),
    ("f=h\ng() { cp x.py /dest/${f^^}.py; }\ncp x.py /dest/a.py\ng\ncp x.py /dest/b.py\n",
     ["/dest/H.py", "/dest/a.py", "/dest/b.py"], ["/dest/a.py"]),
    # Inside $(...) only its subshell ends: with status 2.
    ("f=h\nV=$(echo ${f^})\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"], ["/dest/s2.py"]),
    # What both shells have is expanded by both.
    ("f=ab\ncp x.py /dest/${f:-x}${f:+y}${#f}${f%%b}${f##a}.py\n", ["/dest/aby2ab.py"], ["/dest/aby2ab.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_bash_expansion_ends_dash_where_it_is_expanded(script: str, bash: list[str], dash: list[str],
                                                         shell: str) -> None:
    assert in_dest(run_script(script, f"{shell} i.sh")) == (bash if shell == "bash" else dash)


def test_dash_says_which_expansion_it_refuses_and_ends_with_status_2() -> None:
    plan = run_script("f=hello\ncp x.py /dest/${f:1}.py\n", "dash i.sh")
    assert [(n.kind, n.line, n.reason) for n in plan.notes][:1] == [
        ("fails", 2, '${f:...} is bash\'s: dash says "Bad substitution" and ends here')]
    assert in_dest(run_script("f=h\nV=$(echo ${f:0})\ncp x.py /dest/e$?.py\n", "dash i.sh")) == ["/dest/e2.py"]


def test_under_sh_a_bash_expansion_is_expanded_and_said_to_depend_on_the_image() -> None:
    plan = run_script("f=hello\ncp x.py /dest/${f^^}.py\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/HELLO.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 2, 'the base image\'s sh decides: bash expands ${f^^...}, dash says "Bad substitution" and ends; '
                       "the reader expands it as bash does")]


def test_a_replacement_pattern_may_hold_any_letter() -> None:
    # bash 5.2: V=aXb; ${V/X/-} is a-b.
    plan = run_script('V=aXb\ncp x.py "/dest/${V/X/-}.py"\n')
    assert in_dest(plan) == ["/dest/a-b.py"] and plan.notes == ()


def test_a_replacement_anchored_at_the_end_that_does_not_match_leaves_the_value() -> None:
    # bash 5.2: V=abc; ${V/%zz/y} is abc, ${V/%c/y} is aby.
    plan = run_script('V=abc\ncp x.py "/dest/${V/%zz/y}.py"\ncp x.py "/dest/${V/%c/y}.py"\n')
    assert in_dest(plan) == ["/dest/abc.py", "/dest/aby.py"] and plan.notes == ()
