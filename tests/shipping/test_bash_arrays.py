"""bash's array assignments, ``NAME=(a b)`` and ``NAME+=(c)``: parsed, so the rest of the script is read.

The reader keeps no arrays: the name's value is unknown from there, so a
path built from it is unread, not guessed. For dash (and so under the base
image's ``sh``) the line is a syntax error, and the script is not read on.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of

ARRAY = "files=(\n  x.py   # the fix\n  \"sub/y.py\"\n)\nfiles+=(more.py)\n"


def read(script: str, run: str = "bash i.sh"):  # type: ignore[no-untyped-def]
    return plan_of({"Dockerfile": f"FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && {run}\n",
                    "s/i.sh": script, "s/x.py": "", "s/sub/y.py": ""})


def test_a_bash_array_assignment_is_read_and_the_script_goes_on() -> None:
    plan = read(f"{ARRAY}cp x.py /dest/after.py\n")
    assert plan.image["/dest/after.py"].source == "s/x.py" and plan.notes == ()


@pytest.mark.parametrize("use", ['cp "${files[0]}" /dest/one.py', "cp $files /dest/one.py",
                                 'for f in "${files[@]}"; do cp "$f" /dest/one.py; done'])
def test_what_an_array_holds_is_unknown_so_its_copies_are_unread(use: str) -> None:
    plan = read(f"{ARRAY}{use}\ncp x.py /dest/after.py\n")
    assert "/dest/one.py" not in plan.image and plan.image["/dest/after.py"].source == "s/x.py"
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 6)]


def test_an_array_with_a_command_substitution_runs_it() -> None:
    plan = read("made=($(cp x.py /dest/sub.py && echo done))\ncp x.py /dest/after.py\n")
    assert sorted(p for p in plan.image if p.startswith("/dest/")) == ["/dest/after.py", "/dest/sub.py"]


def test_under_dash_an_array_is_a_syntax_error() -> None:
    plan = read(f"{ARRAY}cp x.py /dest/after.py\n", run="dash i.sh")
    assert "/dest/after.py" not in plan.image
    assert [(n.kind, n.line) for n in plan.notes][:1] == [("stop", 1)]
