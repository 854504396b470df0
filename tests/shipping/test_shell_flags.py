"""``sh -ec``, ``bash -xc``, ``sh -e -c``, ``set -e`` and friends: combined and separate flags read as sh reads them.

``-c`` takes the first operand as the command string wherever it sits in a
flag cluster; ``-e`` (or ``-o errexit``) makes a failed command end the
shell, and with it the build; ``set +e`` turns that off again. A script run
as ``bash FILE`` ignores its ``#!`` line; run as ``./FILE`` it obeys it.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of, script_context

COPY = "cp /w/s/x.py /dest/x.py"


def run_line(run: str) -> dict[str, str]:
    return {"Dockerfile": f"FROM base\nRUN mkdir /w\nCOPY s /w/s\nRUN {run}\n", "s/x.py": "",
            "s/i.sh": f"{COPY}\necho done\n"}


def copy_of(plan):  # type: ignore[no-untyped-def]
    (found,) = [i for i in plan.installed if i.image_path == "/dest/x.py"]
    return found


@pytest.mark.parametrize(("run", "stops"), [
    (f'sh -c "{COPY}; echo done"', False),
    (f'sh -ec "{COPY}; echo done"', True),
    (f'sh -ce "{COPY}; echo done"', True),
    (f'sh -e -c "{COPY}; echo done"', True),
    (f'bash -xc "{COPY}; echo done"', False),
    (f'bash -xec "{COPY}; echo done"', True),
    (f'bash -o errexit -c "{COPY}; echo done"', True),
    (f'bash -euxo pipefail -c "{COPY}; echo done"', True),
    (f'/bin/bash --norc -e -c "{COPY}; echo done"', True),
    (f'["/bin/sh", "-e", "-c", "{COPY}; echo done"]', True),
    (f'["bash", "-c", "{COPY}; echo done"]', False),
    (f'sh -c "set -e; {COPY}; echo done"', True),
    (f'sh -c "set -eu; {COPY}; echo done"', True),
    (f'sh -c "set -o errexit; {COPY}; echo done"', True),
    (f'sh -ec "set +e; {COPY}; echo done"', False),
    (f'sh -c "{COPY}; set -e; echo done"', False),
    (f'sh -c "{COPY}"', True),  # the last command: its failure is the RUN's
    (f'sh -c "{COPY} && echo done"', True),  # a failed && list fails the RUN too
])
def test_a_command_string_copies_and_set_e_decides_whether_a_failure_stops_the_build(run: str, stops: bool) -> None:
    found = copy_of(plan_of(run_line(run)))
    assert found.script == "Dockerfile" and found.stops_on_error is stops


@pytest.mark.parametrize(("script", "run", "stops"), [
    ("set -e\n", "cd /w/s && ./i.sh", True),
    ("set -eu\n", "cd /w/s && ./i.sh", True),
    ("set -o errexit\n", "cd /w/s && ./i.sh", True),
    ("set -euo pipefail\n", "cd /w/s && ./i.sh", True),
    ("set -x -e\n", "cd /w/s && ./i.sh", True),
    ("set -e\nset +e\n", "cd /w/s && ./i.sh", False),
    ("set -e\nset +o errexit\n", "cd /w/s && ./i.sh", False),
    ("#!/bin/sh -e\n", "cd /w/s && ./i.sh", True),
    ("#!/usr/bin/env -S bash -e\n", "cd /w/s && ./i.sh", True),
    ("#!/bin/bash -e\n", "cd /w/s && bash i.sh", False),  # bash FILE reads the #! line as a comment
    ("", "cd /w/s && bash -e i.sh", True),
    ("", "cd /w/s && sh -xe ./i.sh", True),
    ("", "bash -e /w/s/i.sh", True),
    ("", "cd /w/s && ./i.sh", False),
])
def test_set_e_forms_in_a_script(script: str, run: str, stops: bool) -> None:
    body = script + "cp ./x.py /dest/x.py\necho done\n"
    if run.startswith("bash -e /w/s"):
        body = script + "cd /w/s\ncp ./x.py /dest/x.py\necho done\n"
    plan = plan_of(script_context(body, run=run))
    found = copy_of(plan)
    assert (found.script, found.stops_on_error) == ("s/i.sh", stops)
    (read,) = plan.scripts
    assert read.body.stops_on_error is stops


def test_set_e_after_the_copy_does_not_stop_it() -> None:
    found = copy_of(plan_of(script_context("cp ./x.py /dest/x.py\nset -e\necho done\n")))
    assert found.stops_on_error is False


def test_a_known_failure_under_set_e_ends_the_script() -> None:
    # cp of a folder without -r fails; under set -e nothing after it runs.
    plan = plan_of(script_context("set -e\ncp sub /dest/sub\ncp ./x.py /dest/x.py\n"))
    assert "/dest/x.py" not in plan.image
    assert [(n.line, n.kind) for n in plan.notes] == [(2, "fails"), (4, "fails")]
    # Without set -e the script goes on.
    assert "/dest/x.py" in plan_of(script_context("cp sub /dest/sub\ncp ./x.py /dest/x.py\necho done\n")).image


@pytest.mark.parametrize(("run", "hides"), [
    ("cd /w/s && ./i.sh || true", ("|| true",)),
    ("cd /w/s && ./i.sh; echo done", ("the RUN at Dockerfile line 4 goes on after it fails",)),
    ("cd /w/s && ./i.sh 2>/dev/null", ("2>/dev/null",)),  # the message goes nowhere; the failure still counts
    ("cd /w/s && ./i.sh | tee /tmp/log", ("| ...",)),
])
def test_a_run_line_that_ignores_the_script_failing_hides_its_copies(run: str, hides: tuple[str, ...]) -> None:
    found = copy_of(plan_of(script_context("set -e\ncp ./x.py /dest/x.py\n", run=run)))
    assert found.stops_on_error is True  # the script itself stops...
    assert found.hides_failure == hides  # ...but the RUN line may not


def test_a_script_called_by_a_script_without_set_e_is_ignored_when_it_fails() -> None:
    plan = plan_of(script_context("./inner.sh\necho done\n", files={"s/inner.sh": "set -e\ncp ./x.py /dest/x.py\n"}))
    found = copy_of(plan)
    assert (found.script, found.stops_on_error) == ("s/inner.sh", True)
    assert found.hides_failure == ("s/i.sh goes on after it fails",)
