"""bash's ``${!PREFIX@}`` and ``${!PREFIX*}`` list the names of set variables that start with PREFIX."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import run_script


@pytest.mark.parametrize("form", ["${!ab_@}", "${!ab_*}"])
def test_a_name_listing_is_read_as_such(form: str) -> None:
    plan = run_script(f"ab_x=1\nfor n in {form}; do :; done\ncp x.py /dest/$n\n")
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]
