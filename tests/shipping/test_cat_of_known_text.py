"""What ``cat`` prints where the reader knows the files it reads, and its status; an option is never read as a
file."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


def test_an_option_of_cat_is_not_read_as_the_file_of_that_name() -> None:
    # GNU cat reads '-s' as "squeeze blank lines" even beside a file named '-s': it prints name.txt alone.
    plan = run_script('v=$(cat -s name.txt)\ncp x.py "/dest/$v"\n', files={"s/-s": "opt\n", "s/name.txt": "n\n"})
    assert not any("opt" in path for path in plan.image)


# Each checked with bash 5.2, dash 0.5.12 and GNU cat 9.1: cat fails (status 1) on a file that is not there or a
# folder, after printing the others; the base image's files are taken to be there.
@pytest.mark.parametrize(("script", "placed"), [
    ("cat nope || cp x.py /dest/g", ["/dest/g"]),
    ("set -e\ncat nope\ncp x.py /dest/g", []),
    ("cat sub || cp x.py /dest/d", ["/dest/d"]),
    ("cat x.py nope || cp x.py /dest/two", ["/dest/two"]),
    ("cat -- x.py - < /dev/null && cp x.py /dest/ok", ["/dest/ok"]),
    ("cat /etc/os-release && cp x.py /dest/ok", ["/dest/ok"]),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_cat_fails_on_a_file_the_build_does_not_have(script: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(script + "\n", run)) == placed


def test_cat_names_the_file_it_fails_on() -> None:
    assert [(n.kind, n.line, n.reason) for n in run_script("cat sub nope || true\n").notes] == [
        ("fails", 1, "cat: /w/s/sub is a folder")]
