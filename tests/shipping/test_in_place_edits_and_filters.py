"""``sed -i`` is unread within the files it edits; ``head`` of a file the reader cannot see succeeds."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("line", "scope"), [
    ("sed -i --file=fix.sed a.py b.py", ("/w/s/a.py", "/w/s/b.py")),  # the script is in fix.sed: both are files
    ("sed -i -f fix.sed a.py b.py", ("/w/s/a.py", "/w/s/b.py")),
    ("sed -i s/a/b/ a.py b.py", ("/w/s/a.py", "/w/s/b.py")),  # the first operand is the script
])
def test_sed_in_place_is_unread_within_the_files_it_edits(line: str, scope: tuple[str, ...]) -> None:
    plan = run_script(line + "\n")
    assert [(n.kind, n.scope) for n in plan.notes] == [("unread", scope)]


@pytest.mark.parametrize("line", ["head -n1 /etc/os-release", "tail -n1 /etc/os-release", "cut -c1 /etc/os-release"])
def test_a_filter_of_a_base_image_file_succeeds(line: str) -> None:
    plan = run_script(f"{line} && cp x.py /dest/ok.py\n")
    assert in_dest(plan) == ["/dest/ok.py"] and plan.notes == ()
