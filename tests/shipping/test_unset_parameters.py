"""``set -u`` (``-o nounset``, ``sh -u``): expanding a parameter that is not set ends the shell.

It ends it whatever ``set -e``, ``||`` or ``if`` around the command say (an
expansion error, in bash and dash alike); a subshell or ``$(...)`` ends
alone. Only what the reader knows is not set counts: a positional
parameter past those given, a name ``unset`` removed. A name the base
image could set is not known to be unset, so the script reads on.
``${1:-default}`` and ``"$@"`` are never errors. An assignment alone has the
status of its last command substitution, so ``X=$(false)`` ends a ``set -e``
script.
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
