"""The read-ahead holds files up to its budget, counting every file it holds; the rest is the reader's."""

from __future__ import annotations

from pathlib import Path

from patcher.archive import open_source
from patcher.archive.prefetch import Prefetch
from tests.fixtures_archives import wheels_zip


def test_files_past_the_budget_are_not_held(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        files = sorted(tree.files(), key=lambda f: f.path)
        budget = files[0].size + files[1].size  # the first two fit, the third does not
        assert files[2].size > 0
        with Prefetch(tree, files, budget=budget) as prefetch:
            assert [prefetch.open(f.path) is not None for f in files[:4]] == [True, True, False, False]


def test_the_budget_counts_every_file_held_not_each_alone(tmp_path: Path) -> None:
    with open_source(wheels_zip(tmp_path, [30_000, 30_000, 30_000])) as tree:
        wheels = [f for f in tree.files() if f.path.startswith("wheels/")]
        assert [f.size for f in wheels] == [30_000] * 3
        with Prefetch(tree, wheels, budget=60_000) as prefetch:
            held = [prefetch.open(f.path) for f in wheels]
            assert [stream is not None for stream in held] == [True, True, False]
            first = held[0]
            assert first is not None and first.read() == tree.read(wheels[0].path)
