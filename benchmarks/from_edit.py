"""Time ``new --from-edit``'s learning on the hand edits the tests use, and on the 2,000-line diagnostic version.

    python benchmarks/from_edit.py [--repeat N]

Prints, per edit, the file's lines, the steps learned and the median
seconds of ``learn_patch`` (the diff, every candidate step run, the
markers, and the final checks: the patch applied to ORIGINAL, to EDITED,
and its example's six ``patcher test`` cases).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from patcher.authoring.from_edit import learn_patch  # noqa: E402
from tests.fixtures_edits import SHIPPED_PATH, TARGET, edit_pairs, mission_stages  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pairs = {name: (a.encode(), b.encode()) for name, (a, b) in edit_pairs().items()}
    stages = mission_stages()
    for number, (before, after) in enumerate(zip(stages, stages[1:]), 1):
        pairs[f"mission-{number}"] = (before, after)
    print(f"{'edit':32} {'lines':>6} {'steps':>5} {'median s':>9} {'min s':>7}")
    for name, (original, edited) in pairs.items():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            learned = learn_patch(name, original, edited, target=TARGET, shipped=SHIPPED_PATH)
            times.append(time.perf_counter() - start)
        lines = original.count(b"\n")
        print(f"{name:32} {lines:6} {len(learned.steps):5} {statistics.median(times):9.2f} {min(times):7.2f}")


if __name__ == "__main__":
    main()
