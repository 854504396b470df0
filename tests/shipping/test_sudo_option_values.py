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


@pytest.mark.parametrize("line", ["sudo -r r cp x.py /dest/a.py", "sudo -t t cp x.py /dest/a.py",
                                  "sudo -u root -r r cp x.py /dest/a.py"])
def test_the_word_after_sudo_role_or_type_is_its_value_not_the_command(line: str) -> None:
    # sudo 1.9.13 (Debian, built --with-selinux): -r ROLE and -t TYPE take a value, an SELinux role and type; the
    # command is cp. Even for root, sudoers asks for a password when a role or type is given: with Debian's
    # sudoers a build (no terminal) gets "a password is required" and status 1, nothing copied; with root NOPASSWD
    # cp runs (SELinux off: the role is not applied). Either way 'r' or 't' never runs as a program.
    plan = run_script(f"{line}\n")
    assert in_dest(plan) in ([], ["/dest/a.py"])
    assert [n for n in plan.notes if n.kind == "program"] == []
