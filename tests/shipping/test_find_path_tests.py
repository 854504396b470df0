"""find's ``-iwholename`` is ``-ipath`` (GNU findutils 4.9): the whole path matched, letter case aside; and find
from a folder the build has not made fails, with a note."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_of, run_script


@pytest.mark.parametrize("test", ["-iwholename 'SUB/Y.PY'", "-ipath 'SUB/Y.PY'", "-wholename 'sub/y.py'"])
def test_find_matches_the_whole_path_under_its_spellings(test: str) -> None:
    plan = run_script(f"find sub {test} -exec cp {{}} /dest/ \\;\n")
    assert in_dest(plan) == ["/dest/y.py"]


def test_find_from_a_missing_folder_is_a_noted_failure() -> None:
    plan = run_script("find /dest/nothere -name x\n")
    assert notes_of(plan, "fails")[0] == ("s/i.sh", 1, "find /dest/nothere -name x")
