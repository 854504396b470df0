"""A script read on its own reports each copy's destination as the image names it.

``read_install_script`` folds what the kernel folds in a path (``//``,
``/./``) so a destination built from a variable that ends in ``/`` names
the same file as one written plainly; a trailing ``/`` (into a folder) is
kept as written, since it says the destination must be a folder.
"""

from __future__ import annotations

import pytest

from patcher.shipping.install_script import read_install_script


@pytest.mark.parametrize(("script", "destination"), [
    ("PREFIX=/opt/vllm/\ncp ops.py $PREFIX/ops/x.py\n", "/opt/vllm/ops/x.py"),
    ("cp ops.py /opt/vllm/./ops/x.py\n", "/opt/vllm/ops/x.py"),
    ("cp ops.py /opt/vllm/ops/\n", "/opt/vllm/ops/"),
])
def test_a_copys_destination_is_the_path_the_image_names(script: str, destination: str) -> None:
    (copy,) = read_install_script(script, "/w").copies
    assert copy.destination == destination
