"""What ``cat`` prints where the reader knows the files it reads; an option is never read as a file."""

from __future__ import annotations

from tests.shipping.conftest import run_script


def test_an_option_of_cat_is_not_read_as_the_file_of_that_name() -> None:
    # GNU cat reads '-s' as "squeeze blank lines" even beside a file named '-s': it prints name.txt alone.
    plan = run_script('v=$(cat -s name.txt)\ncp x.py "/dest/$v"\n', files={"s/-s": "opt\n", "s/name.txt": "n\n"})
    assert not any("opt" in path for path in plan.image)
