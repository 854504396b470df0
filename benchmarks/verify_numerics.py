"""Time ``patcher verify-numerics`` on a vendor zip: the whole command, then where its seconds go.

Usage: python benchmarks/verify_numerics.py [ZIP] [--repeat N] [--threads 1,2] [--plain]

Not a test: it prints figures. The machine may be shared, so it prints the
load average beside them, and CPU seconds (user + system, every thread)
next to wall time: CPU seconds move less with the load. Target: the whole
command under 10 s of wall time on an idle 2-core machine.

1. The command in a fresh process, REPEAT times (exit code and a digest of
   its stdout, which must not change from run to run).
2. In this process, each phase once: importing PyTorch, patching the zip
   in memory, then the comparisons with each thread count of ``--threads``
   (patcher runs them on one), split into prefill and decode.

``--plain`` skips the command and the patching and compares the fixture's
shipped file with its patched copy committed as
``tests/golden/paged_attn.patched.py`` (what ``apply`` writes): it needs
only PyTorch, for a machine without patcher's dependencies (run it under
``taskset -c 0,1`` for two cores).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
ZIP = ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"
VENDOR_PY = ROOT / "fixtures" / "vendor" / "enginex-vllm-bi100-qwen36-main" / "qwen3_6_scripts" / "paged_attn.py"
PATCHED_PY = ROOT / "tests" / "golden" / "paged_attn.patched.py"
TARGET_S = 10.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(function: Callable[[], Any]) -> tuple[Any, float, float]:
    """Return what ``function`` returns, its wall seconds and this process's CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = function()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPU(s)"


def command(zip_path: Path, repeat: int) -> tuple[list[float], list[float], set[str]]:
    """Run the command ``repeat`` times; return wall and CPU seconds, and the digests of what each printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    walls, cpus, digests = [], [], set()
    for _ in range(repeat):
        cpu, wall = _children_cpu(), time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "patcher", "verify-numerics", str(zip_path)], env=env,
                              capture_output=True, check=False)
        walls.append(time.perf_counter() - wall)
        cpus.append(_children_cpu() - cpu)
        digests.add(f"exit {done.returncode}, stdout sha256 {hashlib.sha256(done.stdout).hexdigest()[:12]}")
    return walls, cpus, digests


def phases(zip_path: Path | None, thread_counts: list[int]) -> None:
    """Time each phase once in this process and print one line each (no ZIP: the committed plain files)."""
    sys.path.insert(0, str(ROOT))
    _, wall, cpu = _timed(lambda: __import__("patcher.numerics.quiet_torch"))
    print(f"  import torch                      {wall:6.2f} s wall {cpu:6.2f} s CPU")

    from patcher.numerics.compare import compare_sources

    def sources() -> Any:
        from patcher.archive import open_source
        from patcher.cli.options import load_patches
        from patcher.numerics.sources import paged_attn_sources

        with open_source(zip_path) as tree:
            return paged_attn_sources(tree, load_patches(None, ()))

    if zip_path is None:
        vendor, patched = VENDOR_PY.read_bytes(), PATCHED_PY.read_bytes()
    else:
        found, wall, cpu = _timed(sources)
        vendor, patched = found.vendor, found.patched
        print(f"  patch in memory (libcst imported) {wall:6.2f} s wall {cpu:6.2f} s CPU")
    for threads in thread_counts:
        marks: list[tuple[float, float]] = []

        def progress(done: int, total: int) -> None:
            marks.append((time.perf_counter(), time.process_time()))

        start = (time.perf_counter(), time.process_time())
        result, wall, cpu = _timed(lambda: compare_sources(vendor, patched, progress=progress, threads=threads))
        prefill = sum(c.function == "forward_prefix" for c in result.comparisons)
        # The grid runs prefill first: the mark after the last prefill case splits the two.
        split = marks[prefill - 1] if prefill else start
        print(f"  compare, {threads} thread(s), {len(result.comparisons)} cases {wall:6.2f} s wall {cpu:6.2f} s CPU "
              f"(prefill {split[0] - start[0]:.2f} s wall {split[1] - start[1]:.2f} s CPU; decode "
              f"{wall - (split[0] - start[0]):.2f} s wall {cpu - (split[1] - start[1]):.2f} s CPU)"
              f"{'' if not result.failed else f'; {len(result.failed)} DIFFER'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("zip", nargs="?", type=Path, default=ZIP)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the whole command (default 3)")
    parser.add_argument("--threads", default="1,2", help="thread counts for the in-process comparisons")
    parser.add_argument("--plain", action="store_true",
                        help="only the comparisons, on the committed plain files (needs only PyTorch)")
    args = parser.parse_args(argv)
    threads = [int(n) for n in args.threads.split(",") if n]
    if args.plain:
        print(f"# compare {VENDOR_PY.relative_to(ROOT)} with {PATCHED_PY.relative_to(ROOT)}; {_load()}")
        phases(None, threads)
        print(f"# {_load()}")
        return 0
    print(f"# patcher verify-numerics {args.zip.name}; {_load()}")
    # The target is for an idle machine: judged only when the others leave most of the CPUs free.
    idle = os.getloadavg()[0] < (os.cpu_count() or 1) / 2
    walls, cpus, digests = command(args.zip, args.repeat)
    verdict = ("met" if min(walls) < TARGET_S else "missed") if idle else "not judged, the machine is loaded"
    print(f"command, fresh process, {args.repeat} run(s): wall min {min(walls):.2f} s, median "
          f"{statistics.median(walls):.2f} s (target < {TARGET_S:.0f} s on an idle machine: {verdict}); "
          f"CPU min {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s")
    print(f"output: {'; '.join(sorted(digests))}" + ("" if len(digests) == 1 else " (CHANGED between runs)"))
    print("phases, in this process:")
    phases(args.zip, threads)
    print(f"# {_load()}")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
