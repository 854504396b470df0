"""Time the safety rules: ``patcher check`` on a zip, and the file rules on many large files.

Usage: python benchmarks/check_rules.py [ZIP] [--repeat N] [--copies N] [--times N]

Not a test: it prints figures (min and median of N runs; the machine is
shared, so the min is the figure to compare). The large-file case runs
``run_rules`` in this process over COPIES copies of the zip's shipped
``paged_attn.py``, each repeated TIMES times and made distinct by a
trailing comment, so no copy is a cache hit of another.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZIP = ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"
SHIPPED = "qwen3_6_scripts/paged_attn.py"


def _figures(samples: list[float]) -> str:
    return f"min {min(samples) * 1000:.0f} ms, median {statistics.median(samples) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("zip", nargs="?", type=Path, default=ZIP)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--copies", type=int, default=26)
    parser.add_argument("--times", type=int, default=2)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATCHER_NO_CACHE": "1"}

    cli = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "patcher", "check", str(args.zip)], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        cli.append(time.perf_counter() - start)
    print(f"patcher check {args.zip.name} (cache off, fresh process): {_figures(cli)}")

    sys.path.insert(0, str(ROOT))
    os.environ["PATCHER_NO_CACHE"] = "1"
    from patcher.checks import load_policy, run_rules

    with zipfile.ZipFile(args.zip) as archive:
        name = next(n for n in archive.namelist() if n.endswith("/" + SHIPPED))
        text = archive.read(name)
    policy = load_policy(ROOT / "patches" / "policy.toml")
    files = [(f"big/file{n}.py", text * args.times + f"\n# copy {n}\n".encode()) for n in range(args.copies)]
    lines = sum(data.count(b"\n") for _, data in files)
    rules = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        run_rules([(path, (lambda d=data: d)) for path, data in files], policy)
        rules.append(time.perf_counter() - start)
    print(f"file rules on {args.copies} files, {lines} lines, in process: {_figures(rules)}")


if __name__ == "__main__":
    main()
