"""How far the reader follows a Python helper's path through the names it is built from.

A helper often builds the file it rewrites a folder at a time
(``SITE = ROOT + '/vllm'``, ``OPS = SITE + '/ops'``...). The reader follows
such a value through twenty steps of the expression (a name looked up is
one step, the ``+`` or join that builds it another): a path built through
nine names is read, one built through ten is not, and the helper is then
unread, as a path it computes at run time would be. The bound is what keeps
a hostile helper that chains names without end from being followed forever.
"""

from __future__ import annotations

import pytest

from patcher.shipping.python_effects import python_effects

SITE = "/usr/local/corex/lib/python3/dist-packages"


def helper_writing_through(names: int) -> str:
    """A helper that opens for writing a path built one folder a name, each name from the one before it."""
    lines = [f"P0 = '{SITE}'"] + [f"P{n} = P{n - 1} + '/d{n}'" for n in range(1, names + 1)]
    return "\n".join(lines) + f"\nwith open(P{names}, 'w') as f:\n    f.write('')\n"


@pytest.mark.parametrize("names", [1, 5, 9])
def test_a_path_built_through_up_to_nine_names_is_read(names: int) -> None:
    effects = python_effects(helper_writing_through(names))
    assert effects is not None
    assert effects.writes == (SITE + "".join(f"/d{n}" for n in range(1, names + 1)),)


@pytest.mark.parametrize("names", [10, 11])
def test_a_path_built_through_ten_names_or_more_is_not_followed(names: int) -> None:
    assert python_effects(helper_writing_through(names)) is None
