"""Redirections that name a descriptor other than standard input, or one held in a variable, and ``set -C``.

``3< FILE`` opens FILE on descriptor 3: what ``read`` reads is still its
standard input (a here-document's text). ``<&0`` duplicates a descriptor and
creates no file named ``0``. Under ``set -C`` a ``>`` to a path only the base
image could hold writes there only if the image does not have it: the reader
says so, for that path alone. ``>&$fd`` with a value the reader does not know
may be a descriptor or a file: it says it cannot tell where it writes. Each
expected result was checked by running the script under bash 5.2.15 and
dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_file_opened_on_descriptor_3_is_not_what_read_reads(run: str) -> None:
    plan = run_script('printf "abc\\n" > /tmp/f3\nread v <<EOF 3< /tmp/f3\nhello\nEOF\ncp x.py "/dest/[$v]"\n',
                      run=run)
    assert in_dest(plan) == ["/dest/[hello]"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_duplicating_a_descriptor_creates_no_file(run: str) -> None:
    # A '> 0' would create ./0, which the test would then find.
    plan = run_script("true <&0\n[ -e 0 ] && cp x.py /dest/made\ncp x.py /dest/after\n", run=run)
    assert in_dest(plan) == ["/dest/after"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_noclobber_leaves_a_write_to_a_path_the_base_image_may_hold_to_the_image(run: str) -> None:
    plan = run_script("set -C\ntrue > /etc/app.conf && cp x.py /dest/written\ncp x.py /dest/after\n", run=run)
    assert in_dest(plan) == ["/dest/after", "/dest/written"]
    assert notes(plan) == [("unread", 2, "true > /etc/app.conf",
                            "set -C: writes to /etc/app.conf only if the base image does not have it")]
    assert plan.notes[0].scope == ("/etc/app.conf",)


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_duplication_to_a_value_the_reader_cannot_work_out_is_noted(run: str) -> None:
    # The image's python3 prints 2: the output goes to standard error, no file is written, the copy runs.
    plan = run_script("fd=$(python3 -c 'print(2)')\ntrue >&$fd && cp x.py /dest/ok\n", run=run)
    assert in_dest(plan) == ["/dest/ok"]
    assert notes(plan) == [("unread", 2, "true >&$fd", "writes to $(python3 -c 'print(2)'), which the reader cannot "
                                                       "work out")]
