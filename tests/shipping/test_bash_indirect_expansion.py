"""bash's indirect expansions: ``${!NAME}`` (the variable NAME names), ``${!NAME[@]}`` (an array's indices) and
``${!PREFIX*}`` (the names of the variables that start so: the image's to know).

For dash they are a bad substitution, and the script is not read on.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script as read




# What bash 5.2 placed for each.
@pytest.mark.parametrize(("script", "files"), [
    ('N=DEST\nDEST=/dest\ncp x.py "${!N}/x.py"', ["/dest/x.py"]),
    ('set -- DEST\nDEST=/dest\ncp x.py "${!1}/one.py"', ["/dest/one.py"]),
    ('N=DEST\nDEST="/dest/two words"\nmkdir "$DEST"\ncp x.py "${!N}/"', ["/dest/two words/x.py"]),  # quoted: one word
    ('A=(x.py y)\nfor i in "${!A[@]}"; do cp x.py /dest/i$i.py; done', ["/dest/i0.py", "/dest/i1.py"]),
    ('A=()\nfor i in "${!A[@]}"; do cp x.py /dest/never.py; done\ncp x.py /dest/after.py', ["/dest/after.py"]),
])
def test_an_indirect_expansion_gives_what_bash_gives(script: str, files: list[str]) -> None:
    plan = read(script + "\n")
    assert placed(plan) == files and plan.notes == ()


@pytest.mark.parametrize("script", ['cp x.py "/dest/${!PYTHON*}.py"', 'N=$(id -un)\ncp x.py "/dest/${!N}.py"'])
def test_an_indirect_expansion_only_the_image_can_tell_is_unknown(script: str) -> None:
    plan = read(script + "\ncp x.py /dest/after.py\n")
    assert placed(plan) == ["/dest/after.py"] and [n.kind for n in plan.notes] == ["unread"]


def test_under_dash_an_indirect_expansion_is_a_bad_substitution() -> None:
    # dash parses it, and ends with status 2 where it is expanded (so the lines before it run).
    plan = read('N=DEST\nDEST=/dest\ncp x.py /dest/before.py\ncp x.py "${!N}/x.py"\n', run="dash i.sh")
    assert placed(plan) == ["/dest/before.py"] and [(n.kind, n.line, n.reason) for n in plan.notes][:1] == [
        ("fails", 4, '${!N} is bash\'s: dash says "Bad substitution" and ends here')]


def test_the_indices_of_an_array_starred_are_its_indices() -> None:
    # bash 5.2: A=(x y); "${!A[*]}" is the one word "0 1".
    plan = read('A=(x y)\ncp x.py "/dest/${!A[*]}.py"\n')
    assert placed(plan) == ["/dest/0 1.py"] and plan.notes == ()
