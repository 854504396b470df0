"""Where a ``find`` line the reader does not evaluate could change files: the unread note's scope.

``find sub -newer x.py -exec CMD {} \\;`` walks by times the reader does not
know, so it is read as unread; its scope is what the line could change:
the trees find walks (the paths before the first test or action, as GNU
find 4.9 reads them), each path a changing command of -exec names besides
``{}`` (not a mode, not an option, not a sed script), a -execdir path only
when absolute, and the file a -fprint writes. A program that reads only
(cat, echo) adds nothing; one the reader does not know, or a -execdir path
that climbs with ``..``, could change anything (no scope).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

SUB = "/w/s/sub"


@pytest.mark.parametrize(("line", "scope"), [
    ("find sub ! -newer x.py -exec rm {} +", (SUB,)),  # '!' starts the expression: no tree of that name
    ("find sub -newer x.py -exec cat {} \\; -exec rm /dest/z \\;", (SUB, "/dest/z")),  # each -exec to its own ';'
    ("find sub -newer x.py -exec rm {} + -exec rm /dest/z \\;", (SUB, "/dest/z")),  # '+' ends the first
    ("find sub -newer x.py -exec echo {} -exec \\;", (SUB,)),  # '-exec' is echo's word here
    ("find sub -newer x.py -exec cat {} \\; -fprint /dest/list", (SUB, "/dest/list")),
    ("find sub -newer x.py -exec chmod 644 {} \\;", (SUB,)),  # 644 is a mode, no path
    ("find sub -newer x.py -exec chmod 644 a {} \\;", (SUB, "/w/s/a")),
    ("find sub -newer x.py -exec sed -i s/a/b/ a {} \\;", (SUB, "/w/s/a")),  # the script is no path
    ("find sub -newer x.py -exec cp --target-directory=/dest {} +", (SUB, "/dest")),
    ("find sub -newer x.py -exec dos2unix -q {} /dest/a \\;", (SUB, "/dest/a")),  # -q is an option
    ("find sub -newer x.py -exec cat {} /etc/hosts \\;", (SUB,)),  # cat changes nothing it names
    ("find sub -execdir cp {} /dest/ \\;", (SUB, "/dest")),  # an absolute path is the same in every folder
    ("find sub -execdir cp {} /dest/../opt/ \\;", (SUB, "/opt")),
    ("find sub -execdir cp {} ../up \\;", None),  # relative and climbing: out of the trees walked
    # GNU find's own options come first; through a link (-L, -H) it reaches anything.
    ("find -P sub -newer x.py -exec rm {} +", (SUB,)),
    ("find -D tree -O3 sub -newer x.py -exec rm {} +", (SUB,)),
    ("find -L sub -newer x.py -exec rm {} +", None),
    ("find -H sub -newer x.py -exec rm {} +", None),
    ("find -L -P sub -newer x.py -exec rm {} +", (SUB,)),  # the last of them counts
    # A path is any word before one that starts with '-' or is '(' or '!' alone: ')', '-' and '(x' are paths.
    ("find sub ')' -newer x.py -exec rm {} +", (SUB, "/w/s/)")),
    ("find sub '(x' -newer x.py -exec rm {} +", (SUB, "/w/s/(x")),
])
def test_an_unread_find_line_is_unread_within_what_it_could_change(line: str, scope: tuple[str, ...] | None) -> None:
    plan = run_script(line + "\n")
    assert [(n.kind, n.scope) for n in plan.notes] == [("unread", scope)]


@pytest.mark.parametrize("line", [
    "find sub -newer x.py -exec cp {} /dest/a",  # no ';' or '+' to end the command
    "find sub -newer x.py -exec \\;",  # no command
    "find sub -newer x.py -fprint",  # no FILE
])
def test_a_find_line_missing_an_argument_is_read_without_a_copy(line: str) -> None:
    # GNU find refuses each ("missing argument to ..."); the reader reads none of them as placing a file.
    plan = run_script(line + "\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] in (["unread"], ["fails"])


def test_a_find_that_only_prints_changes_nothing() -> None:
    plan = run_script("find sub -newer x.py -print >/dev/null && cp x.py /dest/found.py\n")
    assert in_dest(plan) == ["/dest/found.py"] and plan.notes == ()
