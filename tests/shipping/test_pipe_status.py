"""A pipe's status: its last part's, or under ``set -o pipefail`` the failure of any part.

``set -euo pipefail`` heads most bash install scripts, and hadolint asks for
``SHELL ["/bin/bash", "-o", "pipefail", "-c"]`` in Dockerfiles: with it,
``cp ... | tee log`` failing ends the script (set -e) or fails the RUN, and
the pipe no longer hides the copy's failure. dash refused the option before
0.5.13 (Debian 12 and Ubuntu 24.04 ship 0.5.12), ending the script there, so
under ``sh`` or ``dash`` the line is unread. Every answer below was checked
with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, plan_of, run_script


@pytest.mark.parametrize(("script", "placed"), [
    ("set -e\nfalse | cat\ncp x.py /dest/x.py\n", ["/dest/x.py"]),  # only cat's status counts
    ("set -eo pipefail\nfalse | cat\ncp x.py /dest/x.py\n", []),
    ("set -euo pipefail\nfalse | cat\ncp x.py /dest/x.py\n", []),
    ("set -e -o pipefail\ncat x.py | false | cat\ncp x.py /dest/x.py\n", []),  # a middle part
    ("set -e\nset -o pipefail\n(exit 3) | cat\ncp x.py /dest/x.py\n", []),  # an exit ends its own part only
    ("set -eo pipefail\nset +o pipefail\nfalse | cat\ncp x.py /dest/x.py\n", ["/dest/x.py"]),
    ("set -eo pipefail\ntrue | cat\ncp x.py /dest/x.py\n", ["/dest/x.py"]),
    ("set -eo pipefail\nfalse | cat || true\ncp x.py /dest/x.py\n", ["/dest/x.py"]),  # || still exempts it
])
def test_pipefail_makes_any_failing_part_end_a_set_e_script(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


@pytest.mark.parametrize(("script", "placed"), [
    ("if false | cat; then cp x.py /dest/a.py; else cp x.py /dest/b.py; fi\n", ["/dest/a.py"]),
    ("set -o pipefail\nif false | cat; then cp x.py /dest/a.py; else cp x.py /dest/b.py; fi\n", ["/dest/b.py"]),
    ("set -o pipefail\nif ! false | true; then cp x.py /dest/a.py; fi\n", ["/dest/a.py"]),  # ! turns the pipe's failure
    ("set -o pipefail\nfalse | cat && cp x.py /dest/a.py || cp x.py /dest/b.py\n", ["/dest/b.py"]),
])
def test_pipefail_decides_which_branch_runs(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


def test_under_pipefail_a_pipe_no_longer_hides_a_copys_failure() -> None:
    plain = run_script("cp x.py /dest/x.py | tee /tmp/log\n")
    strict = run_script("set -o pipefail\ncp x.py /dest/x.py | tee /tmp/log\n")
    (copied,) = [i for i in plain.installed if i.image_path == "/dest/x.py"]
    (strict_copy,) = [i for i in strict.installed if i.image_path == "/dest/x.py"]
    assert copied.hides_failure == ("| ...",)
    assert strict_copy.hides_failure == ()


@pytest.mark.parametrize(("shell", "stops"), [
    ('SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n', True),
    ('SHELL ["/bin/bash", "-c"]\n', False),
    ("", False),
])
def test_a_dockerfile_shell_with_pipefail_fails_the_run_when_a_piped_copy_fails(shell: str, stops: bool) -> None:
    plan = plan_of({"Dockerfile": f"FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\n{shell}"
                                  "RUN cp /w/s/missing.py /dest/m.py | tee /tmp/log\n"
                                  "RUN cp /w/s/x.py /dest/x.py\n",
                    "s/x.py": ""})
    stopped = [n.line for n in plan.notes if n.kind == "fails" and "'docker build' stops" in n.reason]
    assert stopped == ([4 + bool(shell)] if stops else [])


@pytest.mark.parametrize("run", ["bash -o pipefail i.sh", "bash -eo pipefail i.sh", "bash -euo pipefail i.sh"])
def test_pipefail_on_bashs_command_line_holds_in_the_script(run: str) -> None:
    script = "set -e\nfalse | cat\ncp x.py /dest/x.py\n"
    assert in_dest(run_script(script, run)) == []


@pytest.mark.parametrize("run", ["sh i.sh", "dash i.sh"])
def test_pipefail_under_sh_is_unread_because_older_dash_refuses_it(run: str) -> None:
    plan = run_script("set -eo pipefail\ncp x.py /dest/x.py | tee /tmp/log\n", run)
    (line,) = [n for n in plan.notes if n.kind == "unread"]
    assert line.line == 1 and "dash 0.5.12" in line.reason and "refuses it" in line.reason
    assert in_dest(plan) == ["/dest/x.py"]  # read on as bash and later dash run it


def test_pipefail_under_bash_is_read_without_a_note() -> None:
    plan = run_script("set -eo pipefail\ncp x.py /dest/x.py | tee /tmp/log\n")
    assert [n for n in plan.notes if n.kind == "unread"] == []


@pytest.mark.parametrize("run", ["sh -o pipefail i.sh", "sh -eo pipefail i.sh"])
def test_pipefail_on_shs_command_line_is_unread_at_the_line_that_runs_the_script(run: str) -> None:
    # dash 0.5.12 refuses the option before it reads the script; the reader notes the RUN line that gives it.
    plan = run_script("cp x.py /dest/x.py | tee /tmp/log\n", run)
    (line,) = [n for n in plan.notes if n.kind == "unread"]
    assert (line.file, line.line, line.text) == ("Dockerfile", 4, run)
    assert "dash 0.5.12" in line.reason and "refuses it" in line.reason
    assert in_dest(plan) == ["/dest/x.py"]
