"""``true`` and ``false`` run as programs (under env, nice) print nothing, nor does ``:``, which no image has as a
program: a ``$(...)`` of them is empty."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_substitution_of_a_program_that_prints_nothing_is_empty(run: str) -> None:
    # bash and dash: v is empty ('nice :' finds no program ':' and says so on stderr only, status 127).
    plan = run_script('v=$(env true)$(nice :)$(env false)\ncp x.py "/dest/a$v.py"\n', run)
    assert in_dest(plan) == ["/dest/a.py"] and [(n.text, n.kind) for n in plan.notes] == [("nice :", "fails")]
