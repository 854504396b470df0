"""Time the vendor's and the patched ``_forward_prefix_pytorch`` on a CUDA device.

Usage:
    python benchmarks/gpu_prefix.py [VENDOR.zip]            # patches it in memory (needs patcher's deps)
    python benchmarks/gpu_prefix.py --vendor-py A.py --patched-py B.py

One sequence, fp16, kv_heads 1, GQA 6 (6 query heads), head_dim 256, block
size 16, like Qwen3.x prefill on the BI-V100; contexts of 8K to 96K cached
tokens, new-token chunks of 2048 and 8192. Each configuration runs both
copies on the same random paged cache: warm-up calls, then the median of
several runs timed with CUDA events, peak memory, and a bitwise comparison
of the outputs. A measurement, not a test: it prints what it sees.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # patcher.numerics needs only PyTorch: no install on the GPU machine

import torch  # noqa: E402

from patcher.numerics.loader import load_paged_attn  # noqa: E402
from patcher.numerics.stub_ops import StubOps  # noqa: E402

FIXTURE = ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"
KV_HEADS, GQA, HEAD_DIM, BLOCK = 1, 6, 256, 16
DTYPE = torch.float16


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, time every configuration, print the table."""
    args = _parser().parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA device (this benchmark times GPU kernels)", file=sys.stderr)
        return 2
    vendor, patched, label = _sources(args)
    modules = [load_paged_attn(source, StubOps(), f"paged_attn_{name}").PagedAttention
               for name, source in (("vendor", vendor), ("patched", patched))]
    print(f"# {label}")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (smoke run, wall clock)"
    print(f"# {name}, torch {torch.__version__}, CUDA {torch.version.cuda}; "
          f"fp16, one sequence, kv_heads {KV_HEADS}, GQA {GQA}, head_dim {HEAD_DIM}, block {BLOCK}; "
          f"median of {args.runs} runs after {args.warmup} warm-up"
          + (", CUDA events" if device.type == "cuda" else ""))
    header = (f"{'context':>8} {'chunk':>6} {'vendor ms':>10} {'patched ms':>11} {'speedup':>8} "
              f"{'vendor MiB':>11} {'patched MiB':>12} {'bitwise':>8}")
    print(header)
    print("-" * len(header))
    all_equal = True
    for chunk in args.chunks:
        for context in args.contexts:
            kwargs = _case(context, chunk, device, args.seed)
            results = [_time(lambda m=m: m._forward_prefix_pytorch(**kwargs), args.warmup, args.runs, device)
                       for m in modules]
            (vendor_ms, vendor_mib, vendor_out), (patched_ms, patched_mib, patched_out) = results
            equal = torch.equal(vendor_out, patched_out)
            all_equal &= equal
            print(f"{context:>8} {chunk:>6} {vendor_ms:>10.2f} {patched_ms:>11.2f} {vendor_ms / patched_ms:>7.2f}x "
                  f"{vendor_mib:>11.0f} {patched_mib:>12.0f} {'yes' if equal else 'NO':>8}")
            del kwargs, results, vendor_out, patched_out
            if device.type == "cuda":
                torch.cuda.empty_cache()
    print(f"# outputs bitwise equal in every configuration: {'yes' if all_equal else 'NO'}")
    return 0 if all_equal else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vendor_zip", nargs="?", type=Path, default=FIXTURE,
                        help="vendor zip to patch in memory with the bundled patch set (default: the fixture)")
    parser.add_argument("--vendor-py", type=Path, help="the vendor's paged_attn.py (with --patched-py)")
    parser.add_argument("--patched-py", type=Path, help="the patched paged_attn.py (with --vendor-py)")
    parser.add_argument("--contexts", type=_ints, default=[8192, 16384, 32768, 65536, 98304],
                        help="cached context lengths, comma-separated")
    parser.add_argument("--chunks", type=_ints, default=[2048, 8192], help="new tokens per call, comma-separated")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu for a smoke run")
    return parser


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def _sources(args: argparse.Namespace) -> tuple[bytes, bytes, str]:
    if (args.vendor_py is None) != (args.patched_py is None):
        raise SystemExit("error: give both --vendor-py and --patched-py, or neither")
    if args.vendor_py is not None:
        return args.vendor_py.read_bytes(), args.patched_py.read_bytes(), f"{args.vendor_py} vs {args.patched_py}"
    # apply's core, in memory: the shipped copy before and after the bundled patch set.
    from patcher.archive import open_source
    from patcher.cli.options import load_patches
    from patcher.numerics.sources import paged_attn_sources

    with open_source(args.vendor_zip) as tree:
        sources = paged_attn_sources(tree, load_patches(None, ()))
    return sources.vendor, sources.patched, f"{sources.path} of {args.vendor_zip.name}: vendor vs {', '.join(sources.patches)}"


def _case(context: int, chunk: int, device: torch.device, seed: int) -> dict[str, Any]:
    """A random paged cache for one sequence of ``context`` cached and ``chunk`` new tokens, on the GPU.

    The values are random; only the layout matters for timing, and both
    copies read the very same tensors.
    """
    gen = torch.Generator(device=device).manual_seed(seed + context + chunk)
    x = 16 // torch.empty((), dtype=DTYPE).element_size()
    used = -(-(context + chunk) // BLOCK)
    num_blocks = used + 8

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(DTYPE)

    block_table = torch.randperm(num_blocks, generator=gen, device=device)[:used].to(torch.int32)
    return {
        "query": randn(chunk, KV_HEADS * GQA, HEAD_DIM),
        "key": randn(chunk, KV_HEADS, HEAD_DIM),
        "value": randn(chunk, KV_HEADS, HEAD_DIM),
        "key_cache": randn(num_blocks, KV_HEADS, HEAD_DIM // x, BLOCK, x),
        "value_cache": randn(num_blocks, KV_HEADS, HEAD_DIM, BLOCK),
        "block_tables": block_table.unsqueeze(0),
        "query_start_loc": torch.tensor([0, chunk], dtype=torch.int32, device=device),
        "seq_lens_tensor": torch.tensor([context + chunk], dtype=torch.int32, device=device),
        "context_lens": torch.tensor([context], dtype=torch.int32, device=device),
    }


def _time(call: Callable[[], torch.Tensor], warmup: int, runs: int,
          device: torch.device) -> tuple[float, float, torch.Tensor]:
    """Median milliseconds, peak MiB allocated during one call, and the output."""
    for _ in range(warmup):
        call()
    if device.type != "cuda":
        times = []
        for _ in range(max(runs, 1)):
            start = time.perf_counter()
            output = call()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times), float("nan"), output
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    output = call()
    torch.cuda.synchronize()
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), peak, output


if __name__ == "__main__":
    sys.exit(main())
