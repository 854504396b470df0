"""``mktemp``: a new file or folder of a random name in a folder the reader knows; it changes nothing else.

``T=$(mktemp -d)`` heads many install scripts. mktemp never touches a
file that is there, so it is no program that "could change any file";
what it prints is unknown only in its random part, so a later ``cp x.py
"$T/"`` is unread within that folder, not anywhere. The folder and the
name around the X's are GNU mktemp 9.1's (checked with ``mktemp -u``):
TEMPLATE relative to the current folder; with ``-p DIR``/``--tmpdir``, -t
or no TEMPLATE, DIR, ``$TMPDIR`` or /tmp (``-t`` prefers ``$TMPDIR``).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("line", "shown", "folder"), [
    ("mktemp", "/tmp/tmp.$(mktemp)", "/tmp"),
    ("mktemp -d", "/tmp/tmp.$(mktemp -d)", "/tmp"),
    ("mktemp -d /tmp/build.XXXX", "/tmp/build.$(mktemp -d /tmp/build.XXXX)", "/tmp"),
    ("mktemp build.XXXX.py", "/w/s/build.$(mktemp build.XXXX.py).py", "/w/s"),  # relative to the current folder
    ("mktemp sub/c.XXXX", "/w/s/sub/c.$(mktemp sub/c.XXXX)", "/w/s/sub"),
    ("mktemp -p /opt", "/opt/tmp.$(mktemp -p /opt)", "/opt"),
    ("mktemp --tmpdir=/opt a.XXX", "/opt/a.$(mktemp --tmpdir=/opt a.XXX)", "/opt"),
    ("mktemp --tmpdir a.XXX", "/tmp/a.$(mktemp --tmpdir a.XXX)", "/tmp"),
    ("mktemp --tmpdir= a.XXX", "/tmp/a.$(mktemp --tmpdir= a.XXX)", "/tmp"),  # an empty DIR: as no DIR
    ("mktemp -t a.XXXXXX", "/tmp/a.$(mktemp -t a.XXXXXX)", "/tmp"),
    ("mktemp -p /opt -t a.XXX", "/opt/a.$(mktemp -p /opt -t a.XXX)", "/opt"),
    ("TMPDIR=/var mktemp -p /opt -t a.XXX", "/var/a.$(mktemp -p /opt -t a.XXX)", "/var"),  # -t: $TMPDIR first
    ("TMPDIR=/var mktemp", "/var/tmp.$(mktemp)", "/var"),
    ("mktemp --suffix=.py b.XXX", "/w/s/b.$(mktemp --suffix=.py b.XXX).py", "/w/s"),
])
def test_mktemp_prints_a_random_name_in_a_known_folder(line: str, shown: str, folder: str) -> None:
    plan = run_script(f'T=$({line})\ncp x.py "$T"\n')
    (note,) = plan.notes
    assert note.kind == "unread" and note.reason.startswith(f"cp {shown}: ")
    assert note.scope == (folder,)  # unread within the folder only


@pytest.mark.parametrize("line", ["mktemp XX", "mktemp a.XXXbXX", "mktemp a.XXX b.XXX",
                                  "mktemp --suffix=/x a.XXX"])  # "invalid suffix '/x', contains directory separator"
def test_mktemp_fails_on_a_template_gnu_mktemp_refuses(line: str) -> None:
    plan = run_script(f"{line} || cp x.py /dest/refused.py\n")
    assert [n.kind for n in plan.notes] == ["fails"]
    assert "/dest/refused.py" in plan.image


@pytest.mark.parametrize(("script", "folder"), [
    ("export TMPDIR=/var\nT=$(mktemp)\n", "/var"),
    ("TMPDIR=/var\nT=$(mktemp)\n", "/tmp"),  # not exported: mktemp does not see it
])
def test_mktemp_reads_tmpdir_from_its_environment(script: str, folder: str) -> None:
    (note,) = run_script(f'{script}cp x.py "$T"\n').notes
    assert note.scope == (folder,)


def test_mktemp_changes_nothing_the_build_placed() -> None:
    plan = run_script("cp x.py /dest/x.py\nT=$(mktemp -d)\nmktemp -p /dest\n")
    assert plan.notes == () and "/dest/x.py" in plan.image


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_name_mktemp_prints_is_never_empty(run: str) -> None:
    # Unknown as it is, the name is one word: '[ -n "$T" ]' holds and '[ -z "$T" ]' does not, as in sh.
    plan = run_script('T=$(mktemp -d)\n[ -n "$T" ] && cp x.py /dest/made.py\n[ -z "$T" ] && cp x.py /dest/empty.py\n'
                      'exit 0\n', run)
    assert in_dest(plan) == ["/dest/made.py"] and plan.notes == ()


def test_mktemp_names_its_one_template_limit() -> None:
    plan = run_script("mktemp a.XXX b.XXX || true\n")  # GNU: "mktemp: too many templates", status 1
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("fails", 1, "mktemp takes one TEMPLATE at most")]


def test_an_option_mktemps_table_does_not_hold_leaves_mktemp_to_the_image() -> None:
    plan = run_script("mktemp --version\n")
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("program", 1, "runs mktemp, which the reader does not follow: it could change any file", None)]
