"""A ``$(...)`` hears what its commands write on standard output, and only that.

Output a command, a compound command (``{ ...; }``, ``( ... )``, ``if``, a
loop, a function's body) or the shell itself (``exec >FILE``) sends into a
file or onto another descriptor (``>&2``: an install script's log lines)
never reaches the substitution. Each case checked with bash 5.2 and
dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

BOTH = ["bash i.sh", "dash i.sh"]


def heard(substitution: str, run: str, setup: str = "") -> list[str]:
    return in_dest(run_script(f'{setup}E=$( {substitution} )\ncp x.py "/dest/<$E>.py"\n', run))


@pytest.mark.parametrize("substitution", [
    "echo hi >&2", "echo hi 1>&2", "echo hi > /dev/stderr", "echo hi >&-", "echo hi > /dest/o.txt",
    "echo hi 1<> /dest/o.txt",
    "{ echo hi; } >&2", "{ echo hi; } > /dest/o.txt", "(echo hi) > /dest/o.txt", "(echo hi) >&2",
    "if true; then echo hi; fi >&2", "for i in 1; do echo hi; done > /dest/o.txt",
    "exec >/dev/null; echo hi", "exec 1>&2; echo hi",
])
@pytest.mark.parametrize("run", BOTH)
def test_output_sent_elsewhere_is_not_heard(substitution: str, run: str) -> None:
    assert heard(substitution, run) == ["/dest/<>.py"]


@pytest.mark.parametrize("substitution", [
    "echo hi 1>&1", "echo hi 2>/dev/null", "echo hi > /dev/stdout", "echo hi >>'/dev/fd/1'",
    "{ echo hi; } >/dev/stdout", "{ echo hi; } 2>&1", "if true; then echo hi; fi 2>/dev/null",
    "(exec >/dev/null); echo hi", "{ echo lo; } >&2; echo hi",
])
@pytest.mark.parametrize("run", BOTH)
def test_standard_output_left_in_place_is_heard(substitution: str, run: str) -> None:
    assert heard(substitution, run) == ["/dest/<hi>.py"]


@pytest.mark.parametrize("run", BOTH)
def test_a_function_whose_body_is_redirected_prints_nothing_to_its_caller(run: str) -> None:
    # The redirection after a function's body applies at each call.
    assert heard("f", run, setup="f() { echo hi; } > /dest/o.txt\n") == ["/dest/<>.py"]


@pytest.mark.parametrize("run", BOTH)
def test_log_lines_on_standard_error_leave_the_path_a_helper_prints(run: str) -> None:
    script = ('log() { echo "$@" >&2; }\nwhere() { log looking for the target; echo /dest/found.py; }\n'
              'cp x.py "$(where)"\n')
    plan = run_script(script, run)
    assert in_dest(plan) == ["/dest/found.py"] and plan.notes == ()
