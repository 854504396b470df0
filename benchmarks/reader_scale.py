"""How the shipping reader's time grows with the files a build places, and where its budgets stop a hostile one.

Usage: python benchmarks/reader_scale.py [--files N] [--copies 1,10,50,...]

Builds in memory a context of N files under ``s/`` and a Dockerfile that
copies that folder K times (``COPY s /copyK/``), for each K, and prints the
CPU seconds ``plan_shipping`` takes, the files placed and the microseconds a
placement costs (which should stay flat as K grows: the reader is linear in
what it places). Past ``MAX_STEPS`` placements the reader stops with a note:
the last rows show that time bound. It also times a hostile ``.dockerignore``
just inside ``MAX_PATTERN_PAIRS`` (the longest the reader matches), and bash
arrays grown one element at a time in a loop.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from patcher.checks.examples import MemoryTree  # noqa: E402
from patcher.shipping import plan_shipping  # noqa: E402
from patcher.shipping.dockerignore import MAX_PATTERN_PAIRS  # noqa: E402
from patcher.shipping.shell_records import MAX_COMMANDS, MAX_STEPS  # noqa: E402


def _timed(files: dict[str, str]) -> tuple[float, int, int]:
    """CPU seconds to read the context, files placed, and notes that stopped the reading."""
    started = time.process_time()
    plan = plan_shipping(MemoryTree(files))
    return time.process_time() - started, len(plan.image), sum(n.kind == "stop" for n in plan.notes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="files in the copied folder (default 1000)")
    parser.add_argument("--copies", default="1,10,50,100,250", help="how many COPY lines, comma-separated")
    options = parser.parse_args()
    context = {f"s/m{n % 50}/f{n}.py": "" for n in range(options.files)}
    print(f"MAX_STEPS = {MAX_STEPS:,}; {options.files} files in s/")
    print(f"{'COPY lines':>10} {'placed':>9} {'seconds':>8} {'µs/file':>8}  stopped")
    for copies in (int(k) for k in options.copies.split(",")):
        dockerfile = "FROM base\n" + "".join(f"COPY s /copy{k}/\n" for k in range(copies))
        seconds, placed, stopped = _timed({**context, "Dockerfile": dockerfile})
        print(f"{copies:>10} {placed:>9,} {seconds:>8.2f} {1e6 * seconds / max(placed, 1):>8.1f}  {'yes' if stopped else 'no'}")
    patterns = MAX_PATTERN_PAIRS // (options.files + 2)  # the Dockerfile and .dockerignore count too
    ignore = "\n".join(f"*a{n}*b*" for n in range(patterns))
    seconds, placed, _ = _timed({**context, "Dockerfile": "FROM base\nCOPY s /s/\n", ".dockerignore": ignore})
    print(f".dockerignore of {patterns:,} patterns over {options.files:,} files: {seconds:.2f} s ({placed:,} placed)")
    # A bash array grown one element at a time costs each element once (it is changed in place): the time stays
    # linear up to MAX_COMMANDS, where the reader stops.
    for turns in (100, 200, 300):
        for form, line in (("A+=(x)", "A+=(x)"), ("A[$n]=x", "A[$n]=x; n=$((n+1))")):
            script = (f"#!/bin/bash\nn=0\nfor ((i=0;i<{turns};i++)); do for ((j=0;j<{turns};j++)); do {line}; "
                      "done; done\n")
            dockerfile = "FROM base\nCOPY i.sh /i.sh\nRUN bash /i.sh\n"
            seconds, _, stopped = _timed({"Dockerfile": dockerfile, "i.sh": script})
            print(f"{form:<8} {turns * turns:>7,} times: {seconds:.2f} s{' (stopped at MAX_COMMANDS = ' + f'{MAX_COMMANDS:,})' if stopped else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
