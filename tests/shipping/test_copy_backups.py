"""``cp``, ``mv``, ``install`` and ``ln`` with ``-b``, ``--backup[=CONTROL]`` or ``-S SUFFIX`` keep the file they replace.

GNU coreutils 9.1: the file standing at DEST is first renamed to its backup
name, ``DEST~`` (simple, or the suffix ``-S`` or ``$SIMPLE_BACKUP_SUFFIX``
gives) or ``DEST.~N~`` (numbered, N one past the highest there); the default
control is ``$VERSION_CONTROL`` or "existing" (numbered where a numbered
backup exists); ``-S`` alone asks for backups; ``none``/``off`` makes none; a
control that names none refuses the line. So the old file still ships, under
another name. Each row was run under bash 5.2 and dash 0.5.12 with coreutils 9.1.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

X, Y = "s/x.py", "s/sub/y.py"


def shipped(script: str, shell: str = "bash") -> dict[str, str]:
    plan = run_script(script, f"{shell} i.sh")
    return {path: plan.image[path].source for path in in_dest(plan)}


@pytest.mark.parametrize(("script", "files"), [
    ("cp x.py /dest/y.py; cp -b sub/y.py /dest/y.py\n", {"/dest/y.py": Y, "/dest/y.py~": X}),
    ("cp x.py /dest/y.py; cp -S .bak sub/y.py /dest/y.py\n", {"/dest/y.py": Y, "/dest/y.py.bak": X}),
    ("cp x.py /dest/y.py; cp --backup=numbered sub/y.py /dest/y.py; cp --backup=t x.py /dest/y.py\n",
     {"/dest/y.py": X, "/dest/y.py.~1~": X, "/dest/y.py.~2~": Y}),
    ("cp x.py /dest/y.py; cp --backup=num sub/y.py /dest/y.py; cp -b x.py /dest/y.py\n",  # existing: numbered now
     {"/dest/y.py": X, "/dest/y.py.~1~": X, "/dest/y.py.~2~": Y}),
    ("cp x.py /dest/y.py; export VERSION_CONTROL=numbered; cp -b sub/y.py /dest/y.py\n",
     {"/dest/y.py": Y, "/dest/y.py.~1~": X}),
    ("cp x.py /dest/y.py; VERSION_CONTROL=numbered; cp -b sub/y.py /dest/y.py\n",  # not exported: cp never sees it
     {"/dest/y.py": Y, "/dest/y.py~": X}),
    ("cp x.py /dest/y.py; SIMPLE_BACKUP_SUFFIX=.old cp -b sub/y.py /dest/y.py\n", {"/dest/y.py": Y, "/dest/y.py.old": X}),
    # A suffix holding a '/' is not taken: the backup is DEST~.
    ("cp x.py /dest/y.py; cp -S /old sub/y.py /dest/y.py\n", {"/dest/y.py": Y, "/dest/y.py~": X}),
    ("mkdir /dest/y.d; cp x.py /dest/y.py; SIMPLE_BACKUP_SUFFIX=.d/x cp -b sub/y.py /dest/y.py\n",
     {"/dest/y.py": Y, "/dest/y.py~": X}),
    ("cp x.py /dest/y.py; cp --backup=none sub/y.py /dest/y.py\n", {"/dest/y.py": Y}),
    ("cp -b x.py /dest/new.py\n", {"/dest/new.py": X}),  # nothing there: no backup
    ("cp x.py /dest/z.py; mv -b sub/y.py /dest/z.py\n", {"/dest/z.py": Y, "/dest/z.py~": X}),
    ("install -b x.py /dest/f.py; install -b -S .prev sub/y.py /dest/f.py\n", {"/dest/f.py": Y, "/dest/f.py.prev": X}),
    ("cp x.py /dest/q.py; ln -sb /w/s/sub/y.py /dest/q.py\n", {"/dest/q.py": Y, "/dest/q.py~": X}),
    # a file the build wrote itself (touch) replaces the placed one, which stays under its backup name
    ("touch t; cp x.py /dest/f.py; cp -b t /dest/f.py\n", {"/dest/f.py~": X}),
    ("mkdir /dest/d; cp x.py /dest/d/x.py; cp -rb . /dest/d/ 2>/dev/null\n",  # each file of a folder copy
     {"/dest/d/x.py": X, "/dest/d/x.py~": X, "/dest/d/sub/y.py": Y, "/dest/d/i.sh": "s/i.sh"}),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_backup_keeps_the_replaced_file_under_its_backup_name(script: str, files: dict[str, str], shell: str) -> None:
    assert shipped(script, shell) == files


def test_a_backup_control_that_names_none_refuses_the_copy() -> None:
    plan = run_script("cp x.py /dest/y.py; cp --backup=bogus sub/y.py /dest/y.py; cp x.py /dest/s$?.py\n")
    assert in_dest(plan) == ["/dest/s1.py", "/dest/y.py"] and plan.image["/dest/y.py"].source == X
    assert [(n.kind, n.reason) for n in plan.notes] == [("fails", "cp: invalid argument 'bogus' for 'backup type'")]


@pytest.mark.parametrize(("version", "next_version"), [
    ("9" * 40, "1" + "0" * 40), ("9" * 5000, "1" + "0" * 5000), ("1" + "9" * 5000, "2" + "0" * 5000),
    ("007", "1"), ("0", "1"),  # GNU cp 9.1: a version starts at 1 to 9 ('~007~' is none), and any length counts
], ids=["40 nines", "5000 nines", "1 then 5000 nines", "007", "0"])
def test_a_numbered_backup_goes_one_past_the_highest_version_of_any_length(version: str, next_version: str) -> None:
    # CPython refused int() of the 5000-digit version: the reader crashed.
    script = f"cp x.py /dest/y.py; cp x.py /dest/y.py.~{version}~; cp --backup=numbered sub/y.py /dest/y.py\n"
    assert shipped(script) == {"/dest/y.py": Y, f"/dest/y.py.~{version}~": X, f"/dest/y.py.~{next_version}~": X}


def test_a_version_in_other_digits_than_ascii_is_none() -> None:
    assert shipped("cp x.py /dest/y.py; cp x.py /dest/y.py.~٣~; cp --backup=numbered sub/y.py /dest/y.py\n") == {
        "/dest/y.py": Y, "/dest/y.py.~٣~": X, "/dest/y.py.~1~": X}
