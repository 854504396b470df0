"""``${V:+WORD}`` (and ``${V:-WORD}``) of a value only the image knows, which may be empty.

``V=$(cat FILE 2>/dev/null)`` of a file the build did not make is empty
when the base image lacks FILE (bash 5.2 and dash 0.5.12: ``${V:+set}``
then gives nothing), and not when it has it: the reader cannot say which.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_alternative_of_a_value_that_may_be_empty_is_unknown(run: str) -> None:
    plan = run_script('V=$(cat /etc/no-such-file 2>/dev/null)\ncp x.py "/dest/[${V:+set}]"\n', run=run)
    assert "/dest/[set]" not in in_dest(plan)
