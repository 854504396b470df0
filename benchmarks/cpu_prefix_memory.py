"""Measure the extra peak memory of the patched prefill over the vendor's, on the CPU.

Usage:
    python benchmarks/cpu_prefix_memory.py [--context 65536] [--chunk 128]
    python benchmarks/cpu_prefix_memory.py --vendor-py A.py --patched-py LABEL=B.py [--patched-py ...]

Each copy of ``_forward_prefix_pytorch`` runs once in a process of its own,
on the same seeded fp32 paged cache: one sequence of ``--context`` cached
tokens and ``--chunk`` new ones, kv_heads 1, GQA 6, head_dim 256, block 16
(Qwen3.x prefill on the BI-V100). The process builds its inputs, makes one
small warm-up call, resets the kernel's high-water mark of its resident set
(``/proc/self/clear_refs``), then calls the copy once and reads the new
high-water mark: the peak resident memory the call added. glibc is told to
map every block over 128 KiB on its own (``MALLOC_MMAP_THRESHOLD_``), so
freed tensors leave the resident set at once, as they leave a GPU
allocator's count. Linux only; needs PyTorch but not patcher's other
dependencies.

By default it compares the vendor's shipped file of the fixture with the
patched copies committed beside the tests, which ``patcher apply`` writes
(tests check that they are current): ``max_gather_tokens`` at its default
(8192) and 0 (one gather of the whole context). It prints one line per
copy, then the extra peak of the default over the vendor's, and exits 1
if that is not under ``--limit-mb`` (64 MB).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # prefix_common, also when loaded from elsewhere

from prefix_common import BLOCK, GATHER_0, GATHER_8192, GQA, HEAD_DIM, KV_HEADS, ROOT, VENDOR  # noqa: E402
from prefix_common import paged_inputs, patched_files  # noqa: E402

PATCHED = {"patched, max_gather_tokens=8192 (default)": GATHER_8192, "patched, max_gather_tokens=0": GATHER_0}
MB = 10**6


def main(argv: list[str] | None = None) -> int:
    """Run each copy in its own process and print the peaks and the extra over the vendor's."""
    args = _parser().parse_args(argv)
    if args.child is not None:
        print(json.dumps(_measure(args.child, args.context, args.chunk, args.seed)))
        return 0
    if not Path("/proc/self/clear_refs").exists():
        print("error: this benchmark reads the peak resident set from /proc (Linux only)", file=sys.stderr)
        return 2
    copies = [("vendor", args.vendor_py), *patched_files(args.patched_py, PATCHED)]
    print(f"# {args.context} context tokens + {args.chunk} new, fp32, one sequence, kv_heads {KV_HEADS}, "
          f"GQA {GQA}, head_dim {HEAD_DIM}, block {BLOCK}; peak resident memory one call adds, "
          f"each copy in its own process")
    header = f"{'copy':<44} {'peak MB':>9} {'extra MB':>9} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    peaks: dict[str, float] = {}
    for label, path in copies:
        result = _run_child(path, args)
        peaks[label] = result["peak_bytes"] / MB
        extra = peaks[label] - peaks["vendor"]
        print(f"{label:<44} {peaks[label]:>9.1f} {extra:>+9.1f} {result['seconds']:>8.2f}")
    checked = next((label for label, _ in copies if "(default)" in label), copies[-1][0])
    extra = peaks[checked] - peaks["vendor"]
    ok = extra < args.limit_mb
    print(f"# extra peak resident memory of '{checked}' over the vendor's at {args.context} context tokens, "
          f"fp32: {extra:.1f} MB ({'under' if ok else 'NOT under'} {args.limit_mb} MB)")
    return 0 if ok else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=65536, help="cached context tokens (default 65536)")
    parser.add_argument("--chunk", type=int, default=128, help="new tokens (default 128)")
    parser.add_argument("--vendor-py", type=Path, default=VENDOR, help="the vendor's paged_attn.py")
    parser.add_argument("--patched-py", action="append", default=[], metavar="LABEL=PATH",
                        help="a patched paged_attn.py (repeatable); '(default)' in a label marks the one "
                             "checked against --limit-mb")
    parser.add_argument("--limit-mb", type=float, default=64.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return parser


def _run_child(path: Path, args: argparse.Namespace) -> dict[str, float]:
    # Fixed mmap threshold: large blocks are unmapped when freed, so the
    # resident set follows the live tensors instead of glibc's free lists.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(128 * 1024))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(path),
               "--context", str(args.context), "--chunk", str(args.chunk), "--seed", str(args.seed)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: measuring {path} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _measure(path: Path, context: int, chunk: int, seed: int) -> dict[str, float]:
    """Measure, in a fresh process, the peak resident bytes one call of the copy at ``path`` adds."""
    sys.path.insert(0, str(ROOT))  # patcher.numerics' loader and stub ops need only PyTorch
    from patcher.numerics.loader import load_paged_attn
    from patcher.numerics.stub_ops import StubOps

    cls = load_paged_attn(path.read_bytes(), StubOps(), "paged_attn_measured").PagedAttention
    import torch

    cls._forward_prefix_pytorch(**paged_inputs(600, 40, seed, "cpu", torch.float32))  # warm-up: thread pools, kernels
    inputs = paged_inputs(context, chunk, seed, "cpu", torch.float32)
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # reset the high-water mark to the current RSS
    base = _status_kib("VmRSS")
    start = time.perf_counter()
    cls._forward_prefix_pytorch(**inputs)
    seconds = time.perf_counter() - start
    return {"peak_bytes": (_status_kib("VmHWM") - base) * 1024.0, "seconds": seconds}


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


if __name__ == "__main__":
    sys.exit(main())
