"""``sudo``'s options that take a value (``-u USER``, ``-C NUM``...): the value is sudo's, not the command to run.

``sudo -C 3 cp ...`` closes the descriptors from 3 up and runs cp (where
sudoers allows -C, with closefrom_override); 3 is -C's number, so the copy
is what runs.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("line", ["sudo -C 3 cp x.py /dest/a.py", "sudo -u root -C 3 cp x.py /dest/a.py"])
def test_the_number_after_sudo_close_from_is_its_value_and_the_command_runs(line: str) -> None:
    plan = run_script(f"{line}\n")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()
