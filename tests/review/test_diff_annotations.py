"""Each file of the diff is preceded by '#' lines naming the patches that produced it.

A mirror's lines name the shipped copy it was made identical to.
"""

from __future__ import annotations

from tests.fixtures_cli import MANIFEST, SERIES
from tests.fixtures_vendor import SHIPPED


def test_each_file_is_preceded_by_the_patches_that_produced_it(plain) -> None:  # type: ignore[no-untyped-def]
    lines = plain.stdout.splitlines()
    start = lines.index(f"diff --git a/{SHIPPED} b/{SHIPPED}")
    assert lines[start - 4] == f"# {SHIPPED}"
    assert [line.split()[1] for line in lines[start - 3:start]] == list(SERIES)
    assert "Gather the prefill context K/V in groups of tiles" in lines[start - 2]
    mirror = lines.index("diff --git a/paged_attn.py b/paged_attn.py")
    assert lines[mirror - 4] == f"# paged_attn.py: mirror of {SHIPPED}, made identical to it"
    assert start < mirror  # the shipped copy first, then its stale copies
    assert MANIFEST not in plain.stdout
