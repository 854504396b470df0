"""upgrade leaves in the rule cache what the rules find in each drop's shipped files as the drop has them.

The file rules run ahead on the drops' files as they are while the
targets are patched; the drops are then judged as patched. What was found
in the files as they are is kept: a later ``check`` of the drop, or a
second upgrade, knows every shipped file, the patch target as the input
has it too.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from make_upgrade_pairs import make_pair
from patcher.archive.dir_source import DirSource
from patcher.checks.runner import FileRulesAhead, read_shipped_python
from patcher.shipping import plan_shipping
from tests.fixtures_rules import POLICY
from tests.fixtures_vendor import SHIPPED


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the rules run ahead only where fork exists")
def test_after_upgrade_the_cache_knows_every_shipped_file_of_new_as_it_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # In a fresh interpreter: the rules run ahead only in a process of one thread (a forked child could inherit a
    # held lock), which a test process that has started threads no longer is. The cache is this test's own.
    old, new = make_pair(tmp_path / "pair", "v2-gains-argument")
    before = (new / SHIPPED).read_bytes()
    result = subprocess.run([sys.executable, "-m", "patcher", "upgrade", str(old), str(new)], capture_output=True,
                            text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 1, result.stderr
    assert (new / SHIPPED).read_bytes() == before  # the drop is read, never written
    tree = DirSource(new)
    files = read_shipped_python(tree, plan_shipping(tree))
    assert SHIPPED in files
    with FileRulesAhead(files, POLICY) as ahead:
        assert sorted(ahead.known) == sorted(files)  # the target unpatched too: nothing left to judge
