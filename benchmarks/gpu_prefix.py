"""Time the vendor's and patched ``_forward_prefix_pytorch`` copies on a CUDA device.

Usage:
    python benchmarks/gpu_prefix.py                    # plain files: needs only PyTorch
    python benchmarks/gpu_prefix.py --vendor-py A.py --patched-py LABEL=B.py [--patched-py LABEL=C.py ...]
    python benchmarks/gpu_prefix.py --zip VENDOR.zip [--set PATCH.PARAM=VALUE ...]   # needs patcher's deps

By default it compares the vendor's shipped ``paged_attn.py`` of the
fixture tree with the two patched copies committed beside the tests, which
``patcher apply`` writes (the tests check they are current):
``prefix-pregather`` with ``max_gather_tokens`` at its default (8192) and
at 0 (one gather of the whole context). Nothing but PyTorch is imported,
so it runs on a GPU machine without patcher installed.

One sequence, fp16, kv_heads 1, GQA 6 (6 query heads), head_dim 256, block
size 16, like Qwen3.x prefill on the BI-V100; contexts of 8K to 256K cached
tokens, new-token chunks of 2048 and 8192. Each configuration builds one
random paged cache; every call gets its own copy of ``query`` (an fp32
query is scaled in place by the vendor's code). Per copy: warm-up calls,
the median of several runs timed with CUDA events, the peak memory one
call allocates above what its inputs hold, and a bitwise comparison of the
output with the vendor's. ``ratio`` is vendor ms / patched ms (above 1:
the patched copy is faster); ``extra MiB`` is patched MiB - vendor MiB.
A measurement, not a test: it prints what it sees, and exits 1 only if an
output is not bitwise equal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # patcher.numerics' loader and stub ops need only PyTorch
sys.path.insert(0, str(ROOT / "benchmarks"))  # prefix_common, also when loaded from elsewhere

import torch  # noqa: E402
from prefix_common import BLOCK, GATHER_0, GATHER_8192, GQA, HEAD_DIM, KV_HEADS, VENDOR  # noqa: E402
from prefix_common import paged_inputs, patched_files  # noqa: E402

from patcher.numerics.loader import load_paged_attn  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

PATCHED = {"gather 8192": GATHER_8192, "gather 0": GATHER_0}
DTYPE = torch.float16


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, time every configuration, print the table."""
    args = _parser().parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA device (this benchmark times GPU kernels)", file=sys.stderr)
        return 2
    vendor, patched, label = _sources(args)
    vendor_cls = _load(vendor, "vendor")
    copies = [(name, _load(source, f"patched_{number}")) for number, (name, source) in enumerate(patched)]
    print(f"# {label}")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (smoke run, wall clock)"
    print(f"# {name}, torch {torch.__version__}, CUDA {torch.version.cuda}; "
          f"fp16, one sequence, kv_heads {KV_HEADS}, GQA {GQA}, head_dim {HEAD_DIM}, block {BLOCK}; "
          f"median of {args.runs} runs after {args.warmup} warm-up"
          + (", CUDA events" if device.type == "cuda" else ""))
    width = max(len("patched"), *(len(n) for n, _ in copies))
    header = (f"{'context':>8} {'chunk':>6} {'patched':<{width}} {'vendor ms':>10} {'patched ms':>11} "
              f"{'ratio':>6} {'vendor MiB':>11} {'patched MiB':>12} {'extra MiB':>10} {'bitwise':>8}")
    print(header)
    print("-" * len(header))
    all_equal = True
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in copies}  # (ratio, extra MiB)
    for chunk in args.chunks:
        for context in args.contexts:
            inputs = paged_inputs(context, chunk, args.seed, device, DTYPE)
            vendor_ms, vendor_mib, vendor_out = _time(vendor_cls, inputs, args.warmup, args.runs, device)
            for copy_name, cls in copies:
                patched_ms, patched_mib, patched_out = _time(cls, inputs, args.warmup, args.runs, device)
                equal = torch.equal(vendor_out, patched_out)
                all_equal &= equal
                seen[copy_name].append((vendor_ms / patched_ms, patched_mib - vendor_mib))
                print(f"{context:>8} {chunk:>6} {copy_name:<{width}} {vendor_ms:>10.2f} {patched_ms:>11.2f} "
                      f"{vendor_ms / patched_ms:>5.2f}x {vendor_mib:>11.1f} {patched_mib:>12.1f} "
                      f"{patched_mib - vendor_mib:>+10.1f} {'yes' if equal else 'NO':>8}", flush=True)
                del patched_out
            del inputs, vendor_out
            if device.type == "cuda":
                torch.cuda.empty_cache()
    for copy_name, values in seen.items():
        print(f"# {copy_name}: ratio {min(r for r, _ in values):.2f}x-{max(r for r, _ in values):.2f}x, "
              f"extra MiB at most {max(e for _, e in values):+.1f}")
    print(f"# outputs bitwise equal in every configuration: {'yes' if all_equal else 'NO'}")
    return 0 if all_equal else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vendor-py", type=Path, default=VENDOR, help="the vendor's paged_attn.py")
    parser.add_argument("--patched-py", action="append", default=[], metavar="LABEL=PATH",
                        help="a patched paged_attn.py (repeatable; default: the two committed copies)")
    parser.add_argument("--zip", type=Path, help="patch this vendor zip in memory instead (needs patcher's deps)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATCH.PARAM=VALUE",
                        help="with --zip: override a patch parameter (repeatable)")
    parser.add_argument("--contexts", type=_ints, default=[8192, 32768, 65536, 131072, 262144],
                        help="cached context lengths, comma-separated")
    parser.add_argument("--chunks", type=_ints, default=[2048, 8192], help="new tokens per call, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu for a smoke run")
    return parser


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def _load(source: bytes, name: str) -> Any:
    return load_paged_attn(source, StubOps(), f"paged_attn_{name}").PagedAttention


def _sources(args: argparse.Namespace) -> tuple[bytes, list[tuple[str, bytes]], str]:
    """Return the vendor's source, the (label, source) of each patched copy, and a title line."""
    if args.zip is None:
        if args.overrides:
            raise SystemExit("error: --set needs --zip (the plain files are already patched)")
        patched = patched_files(args.patched_py, PATCHED)
        return (args.vendor_py.read_bytes(), [(label, path.read_bytes()) for label, path in patched],
                f"{_shown(args.vendor_py)} vs " + ", ".join(f"{label}: {_shown(path)}" for label, path in patched))
    if args.patched_py:
        raise SystemExit("error: give --zip or --patched-py, not both")
    # apply's core, in memory: the shipped copy before and after the bundled patch set.
    from patcher.archive import open_source
    from patcher.cli.options import load_patches
    from patcher.numerics.sources import paged_attn_sources

    with open_source(args.zip) as tree:
        sources = paged_attn_sources(tree, load_patches(None, tuple(args.overrides)))
    label = ", ".join(sources.patches) + "".join(f" --set {o}" for o in args.overrides)
    return (sources.vendor, [("patched", sources.patched)],
            f"{sources.path} of {args.zip.name}: vendor vs {label}")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _time(cls: Any, inputs: dict[str, Any], warmup: int, runs: int,
          device: torch.device) -> tuple[float, float, torch.Tensor]:
    """Return the median milliseconds, peak MiB one call allocates above its inputs, and the output."""

    def call() -> Callable[[], torch.Tensor]:
        # A fresh query per call: the vendor's code scales an fp32 query in place.
        kwargs = dict(inputs, query=inputs["query"].clone())
        return lambda: cls._forward_prefix_pytorch(**kwargs)

    for _ in range(warmup):
        call()()
    if device.type != "cuda":
        times = []
        for _ in range(max(runs, 1)):
            run = call()
            start = time.perf_counter()
            output = run()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times), float("nan"), output
    run = call()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    output = run()
    torch.cuda.synchronize()
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    times = []
    for _ in range(runs):
        run = call()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), peak, output


if __name__ == "__main__":
    sys.exit(main())
