"""``ls PATH`` of a path the build knows is not there fails with GNU ls's status 2, and the reader says why."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_ls_of_a_missing_path_ends_with_status_two(run: str) -> None:
    plan = run_script("ls /dest/none\ncp x.py /dest/s$?.py\n", run)
    assert in_dest(plan) == ["/dest/s2.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("fails", 1, "ls: /dest/none does not exist at this point of the build")]
