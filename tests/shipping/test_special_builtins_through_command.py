"""``command`` takes from a special builtin the power to end the script with its errors (POSIX, bash, dash).

Where dash, or bash in POSIX mode, ends the script at an error of ``set``,
``export``, ``readonly``, ``shift`` or ``.``, the same command run through
``command`` only fails (status 2; bash's ``.`` 1) and the script reads on;
``command exit`` still exits. Each row was run under bash 5.2.15 and dash
0.5.12 (``sh i.sh``: the base image's sh, either of them).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "run", "placed"), [
    ("command set -Z\ncp x.py /dest/s$?.py\n", "dash i.sh", ["/dest/s2.py"]),
    ("command set -Z\ncp x.py /dest/s$?.py\n", "sh i.sh", ["/dest/s2.py"]),
    ("set -o posix\ncommand set -Z\ncp x.py /dest/s$?.py\n", "bash i.sh", ["/dest/s2.py"]),
    ("set -o posix\ncommand export -Z\ncp x.py /dest/s$?.py\n", "bash i.sh", ["/dest/s2.py"]),
    ("command export -Z\ncp x.py /dest/s$?.py\n", "dash i.sh", ["/dest/s2.py"]),
    ("command readonly -Z\ncp x.py /dest/s$?.py\n", "dash i.sh", ["/dest/s2.py"]),
    # dash sets the names before the bad one, and none after it.
    ("B=b\ncommand export A=1 1bad B=2\ncp x.py /dest/s$?-$A-$B.py\n", "dash i.sh", ["/dest/s2-1-b.py"]),
    ("set -- a\ncommand shift 5\ncp x.py /dest/s$?-$1.py\n", "dash i.sh", ["/dest/s2-a.py"]),
    ("command . /w/s/nosuch\ncp x.py /dest/s$?.py\n", "dash i.sh", ["/dest/s2.py"]),
    ("command . nosuch\ncp x.py /dest/s$?.py\n", "dash i.sh", ["/dest/s2.py"]),
    ("set -o posix\ncommand . /w/s/nosuch\ncp x.py /dest/s$?.py\n", "bash i.sh", ["/dest/s1.py"]),
    # Without command, the same errors end the script.
    ("set -Z\ncp x.py /dest/s$?.py\n", "dash i.sh", []),
    ("set -o posix\nexport -Z\ncp x.py /dest/s$?.py\n", "bash i.sh", []),
    (". /w/s/nosuch\ncp x.py /dest/s$?.py\n", "dash i.sh", []),
    # command exit still exits.
    ("command exit 3\ncp x.py /dest/never.py\n", "dash i.sh", []),
])
def test_a_special_builtins_error_through_command_fails_it_and_the_script_reads_on(script: str, run: str,
                                                                                    placed: list[str]) -> None:
    assert in_dest(run_script(script, run)) == placed
