"""xargs reads its long options and then goes on reading short ones (GNU findutils 4.9); input with an unmatched
quote makes it fail (status 1) with nothing run, and the reader notes that failure."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_of, run_script


@pytest.mark.parametrize("xargs", [
    "xargs --no-run-if-empty -I{} cp {} /dest/",
    "xargs --max-args=1 -I{} cp {} /dest/",
])
def test_short_options_after_a_long_one_are_still_options(xargs: str) -> None:
    plan = run_script(f"echo x.py | {xargs}\n")
    assert in_dest(plan) == ["/dest/x.py"]
    assert not plan.notes


def test_an_unmatched_quote_in_xargs_input_is_a_noted_failure() -> None:
    plan = run_script("echo \"'x.py\" | xargs cp -t /dest\n")
    assert notes_of(plan, "fails")[0] == ("s/i.sh", 1, "xargs cp -t /dest")
    assert in_dest(plan) == []
