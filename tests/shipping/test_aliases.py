"""Aliases: sh expands them in scripts, bash only in POSIX mode or after ``shopt -s expand_aliases``.

A command named by an alias runs the alias's text, which the shell puts in
place when it reads the line: ``alias cp='cp -n'`` makes every later ``cp``
keep what the image held. The reader does not expand aliases, so such a
command is unread (named, with the alias's text) wherever the shell would
expand it; under plain bash the alias is kept and never used, as bash does.
An alias made in a subshell is gone after it; ``unalias`` removes one.
Each answer was checked with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("prefix", "run"), [
    ("", "sh i.sh"),
    ("", "dash i.sh"),
    ("shopt -s expand_aliases\n", "bash i.sh"),
    ("set -o posix\n", "bash i.sh"),
    ("", "bash --posix i.sh"),
])
def test_a_command_an_alias_renames_is_unread_where_the_shell_expands_it(prefix: str, run: str) -> None:
    plan = run_script(f"{prefix}alias cp='cp -n'\ncp x.py /dest/x.py\n", run)
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", prefix.count("\n") + 2, "cp is an alias here (cp -n), which the reader does not expand")]


def test_plain_bash_keeps_an_alias_but_never_runs_it() -> None:
    plan = run_script("alias cp='cp -n'\ncp x.py /dest/x.py\n")
    assert plan.notes == () and in_dest(plan) == ["/dest/x.py"]


@pytest.mark.parametrize("script", [
    "alias cp='cp -n'\nunalias cp\ncp x.py /dest/x.py\n",
    "alias cp='cp -n'\nunalias -a\ncp x.py /dest/x.py\n",
    "(alias cp='cp -n')\ncp x.py /dest/x.py\n",  # the subshell's alias ends with it
    "alias py=python3\ncp x.py /dest/x.py\n",  # an alias of another name changes nothing here
])
def test_a_command_no_alias_names_is_read(script: str) -> None:
    plan = run_script(script, "sh i.sh")
    assert [n for n in plan.notes if n.kind == "unread"] == [] and in_dest(plan) == ["/dest/x.py"]


@pytest.mark.parametrize(("line", "placed"), [
    ("alias nope || cp x.py /dest/x.py", ["/dest/x.py"]),  # no such alias: it fails
    ("alias c=true && alias c && cp x.py /dest/x.py", ["/dest/x.py"]),
    ("alias c=true\nalias c || cp x.py /dest/x.py", []),
])
def test_alias_with_a_name_alone_fails_when_no_such_alias_was_made(line: str, placed: list[str]) -> None:
    assert in_dest(run_script(line + "\n", "sh i.sh")) == placed


@pytest.mark.parametrize("run", ["sh i.sh", "bash i.sh"])
@pytest.mark.parametrize(("line", "placed"), [
    ("alias cp='cp -n'\nunalias cp && cp x.py /dest/x.py", ["/dest/x.py"]),
    ("alias ll='ls -l' la='ls -A'\nunalias ll la && cp x.py /dest/x.py", ["/dest/x.py"]),
    ("unalias cp 2>/dev/null || cp x.py /dest/x.py", ["/dest/x.py"]),  # no such alias: 'not found', it fails
    ("alias ll='ls -l'\nunalias ll cp || cp x.py /dest/x.py", ["/dest/x.py"]),  # one of them missing is enough
    ("alias ll='ls -l'\nunalias ll cp\nalias ll || cp x.py /dest/x.py", ["/dest/x.py"]),  # ll is gone all the same
    ("unalias -a && cp x.py /dest/x.py", ["/dest/x.py"]),
])
def test_unalias_fails_when_a_name_it_is_given_is_no_alias(line: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(line + "\n", run)) == placed


@pytest.mark.parametrize("listing", ["alias", "alias -p"])
def test_alias_listing_the_aliases_prints_what_the_reader_cannot_know(listing: str) -> None:
    # bash 5.2 prints "alias ll='ls -l'" for both; what the image defined before is not known, so a path
    # built from that output is unread.
    plan = run_script(f"alias ll='ls -l'\nout=$({listing})\ncp x.py \"/dest/a$out.py\"\ncp x.py /dest/after.py\n")
    assert in_dest(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]
