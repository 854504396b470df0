"""``export -n``, ``declare +x`` and the options dash refuses: whether a child shell sees a variable.

bash's ``export -n NAME`` and ``declare +x NAME`` keep NAME's value but no
longer pass it to the programs the script runs. dash's ``export`` and
``readonly`` take ``-p`` alone: any other option is refused, and as they are
special builtins the script ends there (status 2). bash fails an option its
builtin lacks (status 2) and reads on, but in POSIX mode (``set -o posix``,
``bash --posix``) ``export`` and ``readonly``, special builtins, end the
script there where set -e would (not ``declare``). Checked with bash 5.2
and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


def test_bash_export_n_keeps_the_value_and_stops_passing_it() -> None:
    script = "export X=/dest\nexport -n X\nsh -c 'cp x.py ${X:-/dest/child}.py'\ncp x.py $X/own.py\n"
    assert in_dest(run_script(script, "bash i.sh")) == ["/dest/child.py", "/dest/own.py"]


@pytest.mark.parametrize("unexport", ["declare +x Y", "declare +i +x Y"])  # bash 5.2 takes each '+' word
def test_bash_declare_plus_x_stops_passing_a_variable(unexport: str) -> None:
    script = f"declare -x Y=/dest\n{unexport}\nsh -c 'cp x.py ${{Y:-/dest/child}}.py'\ncp x.py $Y/own.py\n"
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


@pytest.mark.parametrize("command", ["export -z A=a", "readonly -p=1 A=a", "readonly -r A=a", "declare -Z A=a",
                                     "typeset -xY A=a"])
def test_bash_refuses_a_letter_its_builtin_lacks_and_sets_nothing(command: str) -> None:
    """bash 5.2: "invalid option", status 2, and no name after it is set; the script reads on."""
    plan = run_script(f"{command} || cp x.py /dest/failed$?.py\ncp x.py /dest/${{A:-unset}}.py\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/failed2.py", "/dest/unset.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1)]


@pytest.mark.parametrize(("script", "shell", "dest"), [
    # dash reads one option letter: -p prints the variables and sets nothing, whatever follows it.
    ("export -p X=a >/dev/null\ncp x.py /dest/${X:-unset}.py\n", "dash i.sh", ["/dest/unset.py"]),
    ("readonly -p -z >/dev/null && cp x.py /dest/ok.py\n", "dash i.sh", ["/dest/ok.py"]),
    ("export -p X=a >/dev/null\ncp x.py /dest/${X:-unset}.py\n", "bash i.sh", ["/dest/a.py"]),
    ("readonly -- X=a\ncp x.py /dest/$X.py\n", "dash i.sh", ["/dest/a.py"]),
])
def test_dash_export_p_prints_and_reads_no_more(script: str, shell: str, dest: list[str]) -> None:
    plan = run_script(script, shell)
    assert in_dest(plan) == dest and plan.notes == ()


def test_under_sh_export_p_with_names_depends_on_the_image() -> None:
    plan = run_script("export -p X=a >/dev/null\ncp x.py /dest/${X:-unset}.py\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/a.py"] and [(n.kind, n.line) for n in plan.notes] == [("assumed", 1)]


def test_bash_fails_a_word_that_is_no_name_and_sets_the_rest() -> None:
    """bash 5.2: 'not a valid identifier' (status 1); NAME+=VALUE appends; NAME[I]=V sets an element."""
    script = "export Y=1\nexport Y+=2 1x=3 Z=4 || cp x.py /dest/failed$?.py\ncp x.py /dest/$Y$Z.py\n"
    plan = run_script(script, "bash i.sh")
    assert in_dest(plan) == ["/dest/124.py", "/dest/failed1.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 2)]
    assert run_script("declare -a B\ndeclare B[1]=x && cp x.py /dest/ok.py\n", "bash i.sh").notes == ()


@pytest.mark.parametrize("word", ["Y+=2", "1x=3", "-z", "A[1]=x"])  # dash 0.5.12 sets no array element
def test_dash_ends_the_script_on_a_bad_variable_name(word: str) -> None:
    plan = run_script(f"export Y=1\nexport Z=4 {word}\ncp x.py /dest/after.py\n", "dash i.sh")
    assert in_dest(plan) == []
    assert [(n.kind, n.line) for n in plan.notes][0] == ("fails", 2)
    # It ends with status 2, so the RUN fails and the build stops there.
    assert any(n.kind == "fails" and "'docker build' stops" in n.reason for n in plan.notes)


@pytest.mark.parametrize("builtin", ["export", "readonly"])
@pytest.mark.parametrize(("setting", "run"), [("set -o posix\n", "bash i.sh"), ("", "bash --posix i.sh")])
def test_bash_in_posix_mode_ends_the_script_at_an_export_or_readonly_option_it_lacks(
        builtin: str, setting: str, run: str) -> None:
    # bash 5.2.15 in POSIX mode: "-Z: invalid option"; where the status is tested it fails (failed2), where not
    # the script ends (status 2): only failed2 lands. Without POSIX mode bash reads on: after and failed2 land.
    plan = run_script(f"{setting}{builtin} -Z || cp x.py /dest/failed$?\n{builtin} -Z A=a\ncp x.py /dest/after\n", run)
    assert in_dest(plan) == ["/dest/failed2"]
    assert [(n.kind, n.line - setting.count("\n")) for n in plan.notes][:2] == [("fails", 1), ("fails", 2)]
    assert any(n.kind == "fails" and "'docker build' stops" in n.reason for n in plan.notes)


def test_bash_in_posix_mode_ends_only_where_set_e_would_and_not_at_declare() -> None:
    # bash 5.2.15: 'f || ...' runs f's body where set -e is off (export -Z fails, 'in' lands), the subshell ends (no
    # 'sub'), declare is no special builtin (it fails: after2 lands), and f called alone ends the script (no 'end'):
    # in and after2 land, and the script ends with status 2.
    script = ("set -o posix\nf() { export -Z; cp x.py /dest/in; }\nf || cp x.py /dest/or\n(readonly -Z; cp x.py /dest/sub)\n"
              "declare -Z\ncp x.py /dest/after$?\nf\ncp x.py /dest/end\n")
    plan = run_script(script, "bash i.sh")
    assert in_dest(plan) == ["/dest/after2", "/dest/in"]
