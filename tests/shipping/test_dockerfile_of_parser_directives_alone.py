"""A Dockerfile that holds parser directives and nothing else, its last line one of them (no newline after it).

The directives are read to the end of the file, and then there is no
instruction: ``docker build`` refuses it as it refuses an empty Dockerfile,
and so does the reader ("no FROM: nothing is built").
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from tests.shipping.conftest import plan_of


@pytest.mark.parametrize("dockerfile", ["# escape=`", "# syntax=docker/dockerfile:1\n# escape=`",
                                        "# syntax=docker/dockerfile:1"])
def test_a_dockerfile_of_parser_directives_alone_builds_nothing(dockerfile: str) -> None:
    with pytest.raises(ShippingError) as refused:
        plan_of({"Dockerfile": dockerfile})
    assert (refused.value.where, refused.value.message, refused.value.hint) == (
        "Dockerfile", "no FROM: nothing is built", "'docker build' refuses it too; start the Dockerfile with FROM")
