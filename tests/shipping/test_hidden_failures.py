"""What hides a failed copy is named with the copy: ``|| true``, ``|| cmd``, a pipe, an ``&&`` list, ``2>/dev/null``.

``|| exit``, ``|| exit 1``, ``|| return 1``, ``|| false`` and a group that
ends so (``|| { echo failed; exit 1; }``) hide nothing: the failure still
ends the script. ``|| exit 0`` hides it (``exit 256`` too: the status is
taken modulo 256). A redirection of standard error to ``/dev/null`` hides the
message only, so it is named but changes nothing else; ``2>&1 >/dev/null``
keeps stderr on the old stdout and hides nothing. A script that a caller
runs without stopping on its failure inherits why: the caller's own
``2>/dev/null`` and that it goes on.
"""

from __future__ import annotations

import pytest

from patcher.shipping.install_script import read_install_script
from tests.shipping.conftest import plan_of, script_context


@pytest.mark.parametrize(("line", "hides"), [
    ("cp a.py /d/a.py", ()),
    ("cp a.py /d/a.py || true", ("|| true",)),
    ("cp a.py /d/a.py || :", ("|| true",)),
    ("cp a.py /d/a.py || echo failed", ("|| echo",)),
    ("cp a.py /d/a.py || exit 1", ()),
    ("cp a.py /d/a.py || exit", ()),
    ("cp a.py /d/a.py || exit $?", ()),
    ("cp a.py /d/a.py || exit 0", ("|| exit 0",)),
    ("cp a.py /d/a.py || exit 256", ("|| exit 256",)),
    ("cp a.py /d/a.py || return 0", ("|| return 0",)),
    ("cp a.py /d/a.py || { echo 'copy failed' >&2; exit 1; }", ()),
    ("cp a.py /d/a.py || (echo copy failed; exit 2)", ()),
    ("cp a.py /d/a.py || { echo copy failed; false; }", ()),
    ("cp a.py /d/a.py || { echo copy failed; exit 0; }", ("|| ...",)),
    ("cp a.py /d/a.py || return 1", ()),
    ("cp a.py /d/a.py || false", ()),
    ("cp a.py /d/a.py || ! false", ("|| false",)),  # '! false' succeeds: the failure is hidden
    ("cp a.py /d/a.py || false | cat", ("|| false",)),  # a pipe's status is its last part's: cat succeeds
    ("cp a.py /d/a.py || { echo no; }", ("|| ...",)),
    ("cp a.py /d/a.py && echo ok", ("&& ...",)),
    ("cp a.py /d/a.py && echo ok || true", ("&& ...", "|| true")),
    ("cp a.py /d/a.py || cp b.py /d/b.py || true", ("|| cp", "|| true")),
    ("cp a.py /d/a.py || cp b.py /d/b.py", ("|| cp",)),
    ("cp a.py /d/a.py | tee log", ("| ...",)),
    ("cp a.py /d/a.py | cat | tee x", ("| ...",)),
    ("cp a.py /d/a.py 2>/dev/null", ("2>/dev/null",)),
    ("cp a.py /d/a.py 2>>/dev/null", ("2>/dev/null",)),
    ("cp a.py /d/a.py &>/dev/null", ("&>/dev/null",)),
    ("cp a.py /d/a.py &>>/dev/null", ("&>/dev/null",)),
    ("cp a.py /d/a.py >/dev/null 2>&1", (">/dev/null 2>&1",)),
    ("cp a.py /d/a.py 1>/dev/null 2>&1", (">/dev/null 2>&1",)),
    ("cp a.py /d/a.py >|/dev/null 2>&1", (">/dev/null 2>&1",)),
    ("cp a.py /d/a.py 2>&1 >/dev/null", ()),
    ("cp a.py /d/a.py > /dev/null", ()),
    ("cp a.py /d/a.py 3>/dev/null", ()),
    ("cp a.py /d/a.py 2>/tmp/log", ()),
    ("cp a.py /d/a.py 2> /dev/null >/dev/null", ("2>/dev/null",)),
    ("cp a.py /d/a.py 2>/dev/null || true", ("2>/dev/null", "|| true")),
    # A target quoted in parts is still /dev/null once the quotes go (bash and dash write nothing to a file).
    ("cp a.py /d/a.py 2>/dev/\"null\"", ("2>/dev/null",)),
    ("cp a.py /d/a.py &>'/dev'/null", ("&>/dev/null",)),
    ("cp a.py /d/a.py >/dev/nu''ll 2>&1", (">/dev/null 2>&1",)),
])
def test_what_hides_a_copys_failure_is_named(line: str, hides: tuple[str, ...]) -> None:
    (copy, *_) = read_install_script(line + "\n", "/w").copies
    assert (copy.source, copy.line, copy.hides_failure) == ("/w/a.py", 1, hides)


def test_each_copy_of_an_and_or_list_is_hidden_by_what_follows_it() -> None:
    copies = read_install_script("cp a.py /d/a.py && cp b.py /d/b.py || echo\n", "/w").copies
    assert [(c.source, c.hides_failure) for c in copies] == [("/w/a.py", ("&& ...", "|| echo")),
                                                             ("/w/b.py", ("|| echo",))]


@pytest.mark.parametrize(("script", "run", "hides"), [
    ("./inner.sh 2>/dev/null\necho\n", "cd /w/s && ./i.sh", ("2>/dev/null", "s/i.sh goes on after it fails")),
    ("./inner.sh 2>/dev/null || true\necho\n", "cd /w/s && ./i.sh", ("2>/dev/null", "|| true")),
    ("./inner.sh || echo oops\necho\n", "cd /w/s && ./i.sh", ("|| echo",)),
    ("set -e\n./inner.sh\necho\n", "cd /w/s && ./i.sh", ()),
    ("./inner.sh\n", "cd /w/s && ./i.sh", ()),
    ("./inner.sh\necho\n", "cd /w/s && ./i.sh", ("s/i.sh goes on after it fails",)),
    ("./inner.sh\n", "cd /w/s && ./i.sh 2>/dev/null; echo",
     ("2>/dev/null", "the RUN at Dockerfile line 4 goes on after it fails")),
    ("./inner.sh\n", "cd /w/s && ./i.sh; true", ("the RUN at Dockerfile line 4 goes on after it fails",)),
    ("./inner.sh\n", "cd /w/s && ./i.sh", ()),
    # exec never returns: the script run in the shell's place ends it, so nothing goes on after a failure.
    ('[ -n "$X" ] || exec ./inner.sh\necho\n', "cd /w/s && ./i.sh", ()),
    ("exec ./inner.sh\necho\n", "cd /w/s && ./i.sh", ()),
    ("exec ./inner.sh 2>/dev/null\necho\n", "cd /w/s && ./i.sh", ("2>/dev/null",)),
    ("./inner.sh\n", "cd /w/s && exec ./i.sh; true", ()),
    ("(exec ./inner.sh); echo\n", "cd /w/s && ./i.sh", ("s/i.sh goes on after it fails",)),  # only the subshell ends
])
def test_a_script_run_by_a_caller_that_goes_on_inherits_why(script: str, run: str, hides: tuple[str, ...]) -> None:
    plan = plan_of(script_context(script, run=run, files={"s/inner.sh": "set -e\ncp x.py /d/x.py\n"}))
    (found,) = [i for i in plan.installed if i.image_path == "/d/x.py"]
    assert (found.script, found.line, found.hides_failure) == ("s/inner.sh", 2, hides)


def test_an_install_is_hidden_by_every_step_that_moved_the_file() -> None:
    plan = plan_of(script_context("cp x.py /tmp/x.py 2>/dev/null || true\nmv /tmp/x.py /d/x.py || echo\n"
                                  "cp /d/x.py /e/x.py\n"))
    found = {i.image_path: (i.line, i.hides_failure) for i in plan.installed}
    assert found["/d/x.py"] == (2, ("2>/dev/null", "|| true", "|| echo"))
    assert found["/e/x.py"] == (3, ("2>/dev/null", "|| true", "|| echo"))  # the copy of the copy: each step
