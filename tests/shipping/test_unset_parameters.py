"""``set -u`` (``-o nounset``, ``sh -u``): expanding a parameter that is not set ends the shell.

It ends it whatever ``set -e``, ``||`` or ``if`` around the command say (an
expansion error, in bash and dash alike); a subshell or ``$(...)`` ends
alone. Only what the reader knows is not set counts: a positional
parameter past those given, a name ``unset`` removed. A name the base
image could set is not known to be unset, so the script reads on.
``${1:-default}`` and ``"$@"`` are never errors. An assignment alone has the
status of its last command substitution, so ``X=$(false)`` ends a ``set -e``
script. ``${NAME:?message}`` (``${NAME?message}``) is the same error without
``set -u``, for a NAME known not to be set (with ``:``, or empty).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script as read




# Each row's files are those bash 5.2 and dash 0.5.12 both placed for the same script.
@pytest.mark.parametrize(("script", "files"), [
    ("set -euo pipefail\nDEST=$1\ncp x.py /dest/", []),
    ("set -u\nunset X\necho $X || true\ncp x.py /dest/after.py", []),
    ("set -o nounset\nif [ -n \"$1\" ]; then :; fi\ncp x.py /dest/after.py", []),
    ("set -u\n( echo $2 )\ncp x.py /dest/after.py", ["/dest/after.py"]),  # the subshell ends alone
    ("set -u\nX=$(echo $1)\ncp x.py /dest/after.py", ["/dest/after.py"]),
    ("set -eu\nX=$(echo $1)\ncp x.py /dest/after.py", []),  # the assignment fails with its $(...)
    ("set -u\nDEST=${1:-/dest}\ncp x.py \"$DEST/\"", ["/dest/x.py"]),
    ("set -u\necho \"$@\"\ncp x.py /dest/after.py", ["/dest/after.py"]),
    ("set -u\nf() { echo $1; }\nf a\ncp x.py /dest/after.py", ["/dest/after.py"]),
    ("set -u\nset +u\necho $1\ncp x.py /dest/after.py", ["/dest/after.py"]),
    ("set -u\necho \"$VLLM_HOME\"\ncp x.py /dest/after.py", ["/dest/after.py"]),  # the base image may set it
])
def test_a_parameter_that_is_not_set_ends_a_set_u_shell(script: str, files: list[str]) -> None:
    assert placed(read(script + "\n")) == files


def test_the_note_names_the_parameter_and_the_run_fails() -> None:
    plan = read("set -u\ncp x.py /dest/$1.py\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("fails", 2, "$1 is not set and set -u is on: the shell ends here")]


@pytest.mark.parametrize("run", ["sh -u i.sh", "bash -o nounset i.sh", "sh -eu -c 'cp x.py /dest/$1.py'"])
def test_a_shell_started_with_u_ends_on_a_parameter_that_is_not_set(run: str) -> None:
    assert placed(read("cp x.py /dest/$1.py\n", run=run)) == []


@pytest.mark.parametrize(("script", "files"), [
    ("set -e\nV=$(false)\ncp x.py /dest/after.py", []),
    ("set -e\nV=$(false) || V=none\ncp x.py /dest/$V.py", ["/dest/none.py"]),
    ("set -e\nV=$(false)$(true)\ncp x.py /dest/after.py", ["/dest/after.py"]),  # the last $(...) counts
    ("set -e\nV=x\ncp x.py /dest/$V.py", ["/dest/x.py"]),
])
def test_an_assignment_alone_has_the_status_of_its_last_command_substitution(script: str, files: list[str]) -> None:
    assert placed(read(script + "\n")) == files


# ${NAME:?message} and ${NAME?message}: the same expansion error, without set -u, for a parameter the reader knows is
# not set (or, with ':', empty). Checked with bash 5.2 and dash 0.5.12.
@pytest.mark.parametrize(("script", "files"), [
    ("unset D\ncp x.py \"${D:?no}/q.py\" || true\ncp x.py /dest/after.py\n", []),
    ("D=\ncp x.py \"${D:?empty}/q.py\" || true\ncp x.py /dest/after.py\n", []),
    ("D=\ncp x.py \"${D?unset}/q.py\" || true\ncp x.py /dest/after.py\n", ["/dest/after.py"]),  # set, if empty
    ("f() { cp x.py /dest/${1:?need an arg}.py; }\nf || true\ncp x.py /dest/after.py\n", []),
    ("f() { cp x.py /dest/${1:?need an arg}.py; }\nf a\ncp x.py /dest/after.py\n", ["/dest/a.py", "/dest/after.py"]),
    ("(echo ${2:?}) || cp x.py /dest/sub.py\n", ["/dest/sub.py"]),  # a subshell ends alone
    ("D=/dest\ncp x.py \"${D:?}/q.py\"\n", ["/dest/q.py"]),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_question_mark_expansion_of_what_is_not_set_ends_the_shell(script: str, files: list[str], run: str) -> None:
    assert placed(read(script, run)) == files


def test_a_question_mark_expansion_says_why_the_shell_ends() -> None:
    plan = read("unset D\ncp x.py \"${D:?no}/q.py\"\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [
        ("fails", 2, "$D is not set, so ${D:?} ends the shell here")]


def test_a_question_mark_expansion_of_a_name_the_image_could_set_reads_on() -> None:
    plan = read("cp x.py \"${VLLM_DIR:?set VLLM_DIR}/q.py\" || true\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/after.py"] and [n.kind for n in plan.notes] == ["unread"]
