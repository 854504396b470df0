"""``set`` and ``shopt`` words the readers follow as bash 5.2 and dash 0.5.12 take them.

``set -eo NAME`` sets the letters of the cluster, then refuses an option
NAME the shell lacks: bash fails the command (status 2, so under the -e
just set the script ends), dash ends the script; under sh (dash or bash as
sh) the reader leaves it to the image. bash in POSIX mode (``set -o posix``,
``bash --posix``) ends the script there too, but only where set -e would: a
refused option whose status is tested (``set -Z || ...``, ``if``, ``!``, a
function called so) fails the command and the script reads on. ``set -o errtrace`` makes bash's ERR
trap run inside functions; ``set -o xtrace`` changes nothing read.
``shopt -s -- NAME`` sets NAME (``--`` ends the options); ``shopt -su NAME``
is bash's usage error ("cannot set and unset shell options
simultaneously"), which the reader leaves unread. Each expected result was
checked by running the script under bash 5.2.15 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script

RUN_FAILS = "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted before it)"


def test_a_refused_set_o_name_fails_the_command_in_bash_and_the_script_reads_on() -> None:
    plan = run_script("set -uo bogus || cp x.py /dest/failed\ncp x.py /dest/after\n")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]
    assert notes(plan) == [("fails", 1, "set -uo bogus",
                            "set -o bogus: bash has no such option; the command fails (status 2)")]


def test_the_e_of_set_eo_bogus_is_set_before_the_refusal_so_bash_ends_the_script() -> None:
    plan = run_script("set -eo bogus\ncp x.py /dest/after\n")
    assert in_dest(plan) == []
    assert notes(plan) == [("fails", 1, "set -eo bogus", "set -o bogus: bash has no such option; the command fails "
                                                         "(status 2)"),
                           ("fails", 4, "RUN cd /w/s && bash i.sh", RUN_FAILS)]


def test_dash_ends_the_script_at_set_uo_bogus() -> None:
    plan = run_script("set -uo bogus || cp x.py /dest/failed\ncp x.py /dest/after\n", run="dash i.sh")
    assert in_dest(plan) == []
    assert notes(plan) == [("fails", 1, "set -uo bogus",
                            "set -o bogus: dash has no such option and ends the script"),
                           ("fails", 4, "RUN cd /w/s && dash i.sh", RUN_FAILS)]


@pytest.mark.parametrize(("line", "what"), [("set -o bogus", "-o bogus"), ("set -Z", "-Z (-Z)")])
def test_under_sh_an_option_neither_shell_has_is_left_to_the_image(line: str, what: str) -> None:
    # dash ends the script there; bash as sh fails the command and reads on (both copies land).
    plan = run_script(f"{line} || cp x.py /dest/failed\ncp x.py /dest/after\n", run="sh i.sh")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]
    assert notes(plan) == [("unread", 1, line,
                            f"set {what}: neither bash nor dash has that option; under the base image's sh dash ends "
                            "the script, bash fails the command")]


@pytest.mark.parametrize(("setting", "placed"), [
    ("set -o errtrace\n", ["/dest/after", "/dest/err"]),  # the trap runs for the false inside f
    ("", ["/dest/after"]),  # without errtrace a function's commands run no ERR trap
])
def test_set_o_errtrace_runs_the_err_trap_inside_functions(setting: str, placed: list[str]) -> None:
    plan = run_script(f"{setting}trap 'cp x.py /dest/err' ERR\nf() {{ false; cp x.py /dest/after; }}\nf\n")
    assert in_dest(plan) == placed
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_set_o_xtrace_sets_no_other_option(run: str) -> None:
    # Not noclobber: the redirection still empties the file, and the copy runs.
    plan = run_script("set -o xtrace\n: > sub/y.py && cp x.py /dest/a\n", run=run)
    assert in_dest(plan) == ["/dest/a"]
    assert notes(plan) == []


def test_shopt_s_double_dash_sets_the_names_after_it() -> None:
    plan = run_script('shopt -s -- nullglob\nfor f in *.none; do cp x.py "/dest/$f"; done\ncp x.py /dest/b\n')
    assert in_dest(plan) == ["/dest/b"]  # nullglob: the pattern that matches nothing gives no word
    assert notes(plan) == []


@pytest.mark.parametrize("line", ["shopt -su nullglob", "shopt -s -u nullglob", "shopt -x nullglob"])
def test_shopt_with_letters_other_than_s_or_u_alone_is_not_followed(line: str) -> None:
    # bash 5.2 refuses each (status 1) and sets nothing: nullglob stays off, so the pattern stays a word.
    plan = run_script(f"{line} || cp x.py /dest/failed\nfor f in *.none; do cp x.py \"/dest/$f\"; done\n")
    assert in_dest(plan) == ["/dest/*.none", "/dest/failed"]
    assert notes(plan) == [("unread", 1, line,
                            f"{line}, which the reader does not follow")]


@pytest.mark.parametrize("line", ["set -o bogus", "set -Z"])
def test_bash_in_posix_mode_reads_on_after_a_refused_set_option(line: str) -> None:
    plan = run_script(f"set -o posix\n{line} || cp x.py /dest/failed\ncp x.py /dest/after\n")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]


@pytest.mark.parametrize(("script", "run", "placed"), [
    ("set -o posix\nset -Z\n", "bash i.sh", []),
    ("set -o bogus\n", "bash --posix i.sh", []),
    ("set -o posix\nf() { set -Z; cp x.py /dest/in; }\nf || cp x.py /dest/failed\n", "bash i.sh",
     ["/dest/after", "/dest/in"]),  # f's body runs where set -e is off: set -Z only fails
    ("set -o posix\nif set -o bogus; then :; fi\n", "bash i.sh", ["/dest/after"]),
    ("set -o posix\n{ set -Z; cp x.py /dest/in; } | cat\n", "bash i.sh", ["/dest/after"]),  # the pipe's part ends
])
def test_bash_in_posix_mode_ends_the_script_at_a_refused_set_option_where_set_e_would(
        script: str, run: str, placed: list[str]) -> None:
    plan = run_script(f"{script}cp x.py /dest/after\n", run=run)
    assert in_dest(plan) == placed
