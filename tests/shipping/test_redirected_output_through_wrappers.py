"""``command cat FILE > DEST`` and ``sudo cat FILE > DEST`` copy FILE as ``cat FILE > DEST`` does; writing to a
device (``/dev/null``) is no file of the image and the command goes on (bash 5.2, dash 0.5.12)."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("wrapper", ["command ", "sudo ", ""])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_cat_to_a_file_through_a_wrapper_is_a_copy(wrapper: str, run: str) -> None:
    plan = run_script(f"{wrapper}cat x.py > /dest/a.py\n", run)
    assert in_dest(plan) == ["/dest/a.py"]
    assert plan.image["/dest/a.py"].source == "s/x.py"


@pytest.mark.parametrize("redirect", ["> /dev/null", ">> /dev/null", "2>/dev/null", "> /dev/stderr"])
def test_output_sent_to_a_device_lets_the_command_succeed(redirect: str) -> None:
    plan = run_script(f"echo hi {redirect} && cp x.py /dest/ok.py\n")
    assert in_dest(plan) == ["/dest/ok.py"]
    assert not plan.notes


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_output_sent_to_dev_null_leaves_it_no_regular_file(run: str) -> None:
    # /dev/null is a character device: writing to it makes no regular file of it.
    plan = run_script("echo hi > /dev/null\n[ -f /dev/null ] || cp x.py /dest/ok.py\n", run)
    assert in_dest(plan) == ["/dest/ok.py"]
