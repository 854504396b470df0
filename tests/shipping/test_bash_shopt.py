"""bash's ``shopt`` options that change what a pattern gives: nullglob, failglob, dotglob, globstar.

``nullglob``: a pattern that matches nothing gives no word (not itself);
``failglob``: bash drops the whole command of the script the pattern is
in (``||`` and all; a subshell, a pipe's part or a ``$(...)`` only ends
itself), which fails; ``dotglob``: ``*`` matches
names that start with a dot too (never ``.`` or ``..``); ``globstar``: a
``**`` that is a whole path component matches any number of folders
(``**/`` none at all too), hidden ones only with dotglob. ``shopt -u``
turns them off. Under the base image's ``sh`` (dash has no shopt) the line
is unread; options that change nothing the reader reads are passed over.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of


def read(script: str):  # type: ignore[no-untyped-def]
    """The plan of a context whose Dockerfile runs S/I.SH (SCRIPT) with bash."""
    return plan_of({"Dockerfile": "FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && bash i.sh\n",
                    "s/i.sh": script, "s/x.py": "", "s/.hidden.py": "", "s/sub/y.py": ""})


def dest(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(path for path in plan.image if path.startswith("/dest/"))


def test_nullglob_makes_an_unmatched_pattern_no_word() -> None:
    plan = read("shopt -s nullglob\nfor f in *.whl; do cp \"$f\" /dest/; done\ncp x.py /dest/\n")
    assert dest(plan) == ["/dest/x.py"] and plan.notes == ()
    plain = read("for f in *.whl; do cp \"$f\" /dest/; done\ncp x.py /dest/\n")  # the pattern itself: cp fails
    assert [(n.kind, n.line) for n in plain.notes if n.file == "s/i.sh"] == [("fails", 1)]


@pytest.mark.parametrize(("script", "placed"), [
    # bash drops the whole command of the script, '||' and all, and goes on with the next one.
    ("cp *.whl /dest/w.py || cp x.py /dest/fallback.py\ncp x.py /dest/next.py\n", ["/dest/next.py"]),
    ("cp *.whl /dest/ || true\ncp x.py \"/dest/status$?.py\"\n", ["/dest/status1.py"]),  # it failed: $? is 1
    ("for f in *.whl; do cp x.py /dest/in.py; done || cp x.py /dest/or.py\ncp x.py /dest/next.py\n",
     ["/dest/next.py"]),
    ("f() { cp *.whl /dest/; cp x.py /dest/in_f.py; }\nf\ncp x.py /dest/next.py\n", ["/dest/next.py"]),
    ("if true; then cp *.whl /dest/; cp x.py /dest/in_if.py; fi\ncp x.py /dest/next.py\n", ["/dest/next.py"]),
    # A subshell, a part of a pipe or a $(...) ends there and fails; the command around it goes on.
    ("(cp *.whl /dest/; cp x.py /dest/in_sub.py) || cp x.py /dest/fallback.py\n", ["/dest/fallback.py"]),
    ("cp *.whl /dest/ | cat\ncp x.py /dest/next.py\n", ["/dest/next.py"]),
    ("v=$(cp *.whl /dest/; echo b)\ncp x.py \"/dest/v$v.py\"\n", ["/dest/v.py"]),
    # Under set -e the dropped command ends the script, '|| true' or not.
    ("set -e\ncp *.whl /dest/ || true\ncp x.py /dest/next.py\n", []),
])
def test_failglob_drops_the_whole_command_as_bash_does(script: str, placed: list[str]) -> None:
    plan = read(f"shopt -s failglob\n{script}")
    assert dest(plan) == placed
    assert {(n.kind, n.reason) for n in plan.notes if n.file == "s/i.sh"} == {
        ("fails", "no file matches *.whl, and bash's failglob is set: bash drops the whole command")}


@pytest.mark.parametrize(("script", "placed"), [
    ("cp *.py /dest/ || true\n", ["/dest/x.py"]),
    ("shopt -s dotglob\ncp *.py /dest/ || true\n", ["/dest/.hidden.py", "/dest/x.py"]),
    ("shopt -s dotglob\nshopt -u dotglob\ncp *.py /dest/ || true\n", ["/dest/x.py"]),
    ("shopt -s dotglob\ncp -r * /dest/ || true\n", ["/dest/.hidden.py", "/dest/i.sh", "/dest/sub/y.py",
                                                       "/dest/x.py"]),
    ("cp .h* /dest/\n", ["/dest/.hidden.py"]),
    ("shopt -s dotglob nullglob\n(cp *.py /dest/)\n", ["/dest/.hidden.py", "/dest/x.py"]),  # a subshell keeps them
])
def test_dotglob_lets_a_pattern_match_hidden_names(script: str, placed: list[str]) -> None:
    assert dest(read(script)) == placed


def test_options_that_change_nothing_read_are_passed_over_and_others_noted() -> None:
    assert read("shopt -s histappend checkwinsize\ncp x.py /dest/\n").notes == ()
    plan = read("shopt -s extglob\ncp x.py /dest/\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, "shopt -s extglob, which the reader does not follow")]


@pytest.mark.parametrize("name", ["nocasematch"])
def test_options_that_change_what_runs_are_noted(name: str) -> None:
    # nocasematch makes 'case' and [[ == ]] match in any case.
    plan = read(f"shopt -s checkwinsize {name}\ncp x.py /dest/\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, f"shopt -s {name}, which the reader does not follow")]


# What bash 5.2 gave for each pattern in a folder holding the same files (checked by running it).
@pytest.mark.parametrize(("script", "placed"), [
    ("shopt -s globstar\ncp sub/**/*.py /dest/\n", ["/dest/y.py", "/dest/z.py"]),
    ("shopt -s globstar\ncp **/*.py /dest/\n", ["/dest/x.py", "/dest/y.py", "/dest/z.py"]),
    ("shopt -s globstar\nfor f in sub/**; do [ -f \"$f\" ] && cp \"$f\" /dest/; done; true\n", ["/dest/y.py", "/dest/z.py"]),
    ("shopt -s globstar dotglob\ncp **/*.py /dest/\n", ["/dest/.hidden.py", "/dest/d.py", "/dest/h.py", "/dest/x.py",
                                                      "/dest/y.py", "/dest/z.py"]),
    ("shopt -s globstar\ncp sub/.dot/**/*.py /dest/\n", ["/dest/d.py"]),  # a hidden folder the pattern names
    # Without globstar '**' is '*' twice: one folder's depth.
    ("cp sub/**/*.py /dest/\n", ["/dest/z.py"]),
    ("shopt -s globstar\nshopt -u globstar\ncp sub/**/*.py /dest/\n", ["/dest/z.py"]),
    # Only a whole, unquoted component is globstar's: 'a**' and a quoted '**' are not.
    ("shopt -s globstar\ncp sub**/*.py /dest/\n", ["/dest/y.py"]),
    ("shopt -s globstar\ncp \"**\"/*.py /dest/ || true\n", []),
])
def test_globstar_lets_a_whole_component_match_any_number_of_folders(script: str, placed: list[str]) -> None:
    plan = plan_of({"Dockerfile": "FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && bash i.sh\n",
                    "s/i.sh": script, "s/x.py": "", "s/.hidden.py": "", "s/sub/y.py": "", "s/sub/deep/z.py": "",
                    "s/.hid/h.py": "", "s/sub/.dot/d.py": ""})
    assert dest(plan) == placed


def test_shopt_under_sh_is_the_base_images_shell_to_decide() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && sh i.sh\n",
                    "s/i.sh": "shopt -s nullglob\ncp x.py /dest/\n", "s/x.py": ""})
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 1)]
    assert "/dest/x.py" in plan.image


@pytest.mark.parametrize("shell", ["ash", "ksh", "zsh"])
def test_shopt_under_a_shell_that_is_not_bash_is_a_program_the_reader_does_not_follow(shell: str) -> None:
    # Only bash has shopt: busybox ash, ksh and zsh look for a program of that name, so dotglob is not set.
    plan = plan_of({"Dockerfile": f"FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && {shell} i.sh\n",
                    "s/i.sh": "shopt -s dotglob\ncp *.py /dest/\n", "s/x.py": "", "s/.hidden.py": ""})
    assert dest(plan) == ["/dest/x.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("program", 1, "runs shopt, which the reader does not follow: it could change any file")]


@pytest.mark.parametrize(("script", "placed"), [
    # Listing the options ('shopt', 'shopt -p') succeeds: set -e reads on.
    ("set -e\nshopt\nshopt -p > /tmp/opts\ncp x.py /dest/\n", ["/dest/x.py"]),
    # 'shopt -q NAME' succeeds only when NAME is on.
    ("if shopt -q nullglob; then cp x.py /dest/on.py; else cp x.py /dest/off.py; fi\n", ["/dest/off.py"]),
    ("shopt -s nullglob\nshopt -q nullglob && cp x.py /dest/on.py\n", ["/dest/on.py"]),
    ("shopt -q dotglob nullglob || shopt -qs dotglob\ncp *.py /dest/ || true\n", ["/dest/.hidden.py", "/dest/x.py"]),
    # All four pattern options named at once: one still off (failglob) makes it fail.
    ("shopt -s nullglob dotglob globstar\n"
     "if shopt -q nullglob dotglob globstar failglob; then cp x.py /dest/all.py; else cp x.py /dest/not_all.py; fi\n",
     ["/dest/not_all.py"]),
])
def test_shopt_listing_succeeds_when_each_named_option_is_on(script: str, placed: list[str]) -> None:
    plan = read(script)
    assert dest(plan) == placed and plan.notes == ()


def test_whether_an_option_the_reader_does_not_follow_is_on_is_the_images_to_say() -> None:
    plan = read("shopt -q extglob && cp x.py /dest/on.py\ncp x.py /dest/x.py\n")
    assert dest(plan) == ["/dest/on.py", "/dest/x.py"]  # the && part is read as if it ran, and that is said
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("assumed", 1, "shopt -q extglob")]


def test_a_shopt_name_bash_does_not_have_fails_the_command_and_sets_the_others() -> None:
    # bash 5.2: "shopt: nosuch: invalid shell option name", status 1; nullglob is set all the same.
    plan = read("shopt -s nosuch nullglob\ncp x.py /dest/after$?.py\nfor f in none*; do cp x.py /dest/g.py; done\n")
    assert dest(plan) == ["/dest/after1.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1)]
