"""How far the reader follows a Python helper's path through the names it is built from.

A helper often builds the file it rewrites a folder at a time
(``SITE = ROOT + '/vllm'``, ``OPS = os.path.join(SITE, 'ops')``...). The
reader follows such a value through twenty steps of the expression (a name
looked up is one step, the ``+``, join or f-string that builds it another):
a path built through nine names is read, one built through ten is not, and
the helper is then unread, as a path it computes at run time would be. The
bound is what keeps a hostile helper that chains names without end from
being followed forever.
"""

from __future__ import annotations

import pytest

from patcher.shipping.python_effects import python_effects

SITE = "/usr/local/corex/lib/python3/dist-packages"


# How a helper spells each path: from a string, each name from the one before with '+', with os.path.join, or
# every one of them (the first too, with no field in it) as an f-string. An f-string is one step, as a '+' or a
# join is, and its text and fields (the join's arguments) the next.
SPELLINGS = {"plus": ("'{site}'", "{previous} + '/{folder}'"),
             "join": ("'{site}'", "os.path.join({previous}, '{folder}')"),
             "f-string": ("f'{site}'", "f'{{{previous}}}/{folder}'")}


def helper_writing_through(names: int, spelling: str) -> str:
    """A helper that opens for writing a path built one folder a name, each name from the one before it."""
    first, step = SPELLINGS[spelling]
    lines = ["import os", f"P0 = {first.format(site=SITE)}"]
    lines += [f"P{n} = " + step.format(previous=f"P{n - 1}", folder=f"d{n}") for n in range(1, names + 1)]
    return "\n".join(lines) + f"\nwith open(P{names}, 'w') as f:\n    f.write('')\n"


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("names", [1, 5, 9])
def test_a_path_built_through_up_to_nine_names_is_read(names: int, spelling: str) -> None:
    effects = python_effects(helper_writing_through(names, spelling))
    assert effects is not None
    assert effects.writes == (SITE + "".join(f"/d{n}" for n in range(1, names + 1)),)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("names", [10, 11])
def test_a_path_built_through_ten_names_or_more_is_not_followed(names: int, spelling: str) -> None:
    assert python_effects(helper_writing_through(names, spelling)) is None


def test_an_f_string_in_the_writing_call_is_one_more_name_of_the_path() -> None:
    # Nine f-string names are read (above); open(f'{P9}/x.py') spells the tenth step in the call itself, and a
    # path built through ten is not followed.
    helper = helper_writing_through(9, "f-string").replace("open(P9,", "open(f'{P9}/x.py',")
    assert "open(f'{P9}/x.py', 'w')" in helper
    assert python_effects(helper) is None
