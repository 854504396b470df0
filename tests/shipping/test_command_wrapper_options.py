"""``sudo``, ``env``, ``nice``...: every option of the wrapper is skipped, and what follows them runs.

``sudo -E -H cp ...`` takes both flags for sudo's own; ``env -i -- cp ...``
ends env's options at ``--``. The command after them is what copies the
file, as sudo 1.9 and GNU env run it.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("line", ["sudo -E -H cp x.py /dest/x.py", "sudo -E -u root -H cp x.py /dest/x.py",
                                  "env -i -- cp x.py /dest/x.py", "nohup -- cp x.py /dest/x.py"])
def test_the_command_after_a_wrappers_options_runs(line: str) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


@pytest.mark.parametrize("line", ["stdbuf -i 0 cp x.py /dest/x.py", "stdbuf -o L -e 0 cp x.py /dest/x.py",
                                  "nice -n 5 cp x.py /dest/x.py", "timeout -s KILL -k 5 10 cp x.py /dest/x.py"])
def test_a_wrapper_option_that_takes_a_value_skips_that_value_too(line: str) -> None:
    # GNU stdbuf -i MODE, -o MODE, -e MODE; nice -n N; timeout -s SIGNAL -k DURATION DURATION (coreutils 9.1).
    plan = run_script(line + "\n")
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()
