"""``export -n``, ``declare +x`` and the options dash refuses: whether a child shell sees a variable.

bash's ``export -n NAME`` and ``declare +x NAME`` keep NAME's value but no
longer pass it to the programs the script runs. dash's ``export`` and
``readonly`` take ``-p`` alone: any other option is refused, and as they are
special builtins the script ends there (status 2). Checked with bash 5.2
and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


def test_bash_export_n_keeps_the_value_and_stops_passing_it() -> None:
    script = "export X=/dest\nexport -n X\nsh -c 'cp x.py ${X:-/dest/child}.py'\ncp x.py $X/own.py\n"
    assert in_dest(run_script(script, "bash i.sh")) == ["/dest/child.py", "/dest/own.py"]


def test_bash_declare_plus_x_stops_passing_a_variable() -> None:
    script = "declare -x Y=/dest\ndeclare +x Y\nsh -c 'cp x.py ${Y:-/dest/child}.py'\ncp x.py $Y/own.py\n"
    assert in_dest(run_script(script, "bash i.sh")) == ["/dest/child.py", "/dest/own.py"]


@pytest.mark.parametrize("command", ["export -n X", "readonly -f f", "export -f f"])
def test_dash_refuses_an_export_option_and_the_script_ends(command: str) -> None:
    plan = run_script(f"X=1\nf() {{ :; }}\n{command}\ncp x.py /dest/after.py\n", "dash i.sh")
    assert in_dest(plan) == []
    assert [(n.kind, n.line) for n in plan.notes][0] == ("fails", 3)


def test_dash_takes_export_p() -> None:
    plan = run_script("export -p >/dev/null\nreadonly -p >/dev/null\ncp x.py /dest/after.py\n", "dash i.sh")
    assert in_dest(plan) == ["/dest/after.py"] and plan.notes == ()


def test_under_sh_an_export_option_depends_on_the_image() -> None:
    plan = run_script("export X=/dest\nexport -n X\ncp x.py $X/after.py\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/after.py"] and [(n.kind, n.line) for n in plan.notes] == [("assumed", 2)]


@pytest.mark.parametrize("builtin", ["export", "readonly"])
def test_under_sh_the_note_on_an_export_option_names_the_builtin(builtin: str) -> None:
    plan = run_script(f"f() {{ :; }}\n{builtin} -f f\ncp x.py /dest/after.py\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 2, f"under the base image's sh: dash's {builtin} takes no option but -p and ends the script here, "
                       "bash's reads them; the reader reads on as bash does")]


def test_an_option_word_with_an_equals_sign_names_no_variable() -> None:
    """bash 5.2: 'readonly -p=1' is an invalid option ('-='), not a read-only variable '-p'; the script reads on."""
    plan = run_script("readonly -p=1\nreadonly -p=1\ncp x.py /dest/\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/x.py"]
    assert not any("read-only" in n.reason for n in plan.notes)
