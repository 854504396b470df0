"""``NAME+=(WORDS)`` adds elements to a bash array; ``$NAME`` still names its first element.

Checked with bash 5.2: ``a=(x.py); a+=(sub/y.py); echo $a`` prints ``x.py``,
and ``a=(); a+=(x.py); echo $a`` prints ``x.py``.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script


@pytest.mark.parametrize("script", [
    "a=(x.py)\na+=(sub/y.py)\ncp $a /dest/\n",
    "a=()\na+=(x.py)\ncp \"$a\" /dest/\n",
    "a=(x.py)\nfor f in sub/y.py; do a+=(\"$f\"); done\ncp \"$a\" /dest/\n",
])
def test_the_name_of_an_array_still_expands_to_its_first_element_after_an_append(script: str) -> None:
    plan = run_script(script)
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


# arr+=() on an empty array leaves it empty (checked under bash 5.2.15).
def test_appending_nothing_to_an_empty_array_leaves_it_empty() -> None:
    plan = run_script('arr=()\narr+=()\ncp x.py "/dest/n${#arr[@]}"\narr+=(a)\ncp x.py "/dest/${arr[0]}"\n')
    assert in_dest(plan) == ["/dest/a", "/dest/n0"]
    assert notes(plan) == []
