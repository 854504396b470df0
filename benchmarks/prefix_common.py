"""Share what the prefill benchmarks compare and feed: the committed copies, the Qwen3.x shape, the inputs.

``gpu_prefix.py`` and ``cpu_prefix_memory.py`` import this from their own
folder; it needs PyTorch only when the inputs are built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "fixtures" / "vendor" / "enginex-vllm-bi100-qwen36-main" / "qwen3_6_scripts" / "paged_attn.py"
# The patched copies apply writes (tests check that they are current): max_gather_tokens 8192 and 0.
GATHER_8192 = ROOT / "tests" / "golden" / "paged_attn.patched.py"
GATHER_0 = ROOT / "tests" / "golden" / "paged_attn.patched-gather0.py"
# Qwen3.x prefill on the BI-V100.
KV_HEADS, GQA, HEAD_DIM, BLOCK = 1, 6, 256, 16


def patched_files(items: list[str], default: dict[str, Path]) -> list[tuple[str, Path]]:
    """Return (label, path) for each ``--patched-py LABEL=PATH``, or ``default``'s when none is given."""
    if not items:
        return list(default.items())
    pairs = []
    for item in items:
        label, sep, path = item.rpartition("=")
        if not sep or not label:
            raise SystemExit(f"error: --patched-py {item!r}: expected LABEL=PATH")
        pairs.append((label, Path(path)))
    return pairs


def paged_inputs(context: int, chunk: int, seed: int, device: "torch.device | str",
                 dtype: "torch.dtype") -> dict[str, Any]:
    """Build a random paged cache for one sequence of ``context`` cached and ``chunk`` new tokens.

    The values are random; only the layout matters for time and memory, and
    every copy reads the very same tensors.
    """
    import torch

    gen = torch.Generator(device=device).manual_seed(seed + context + chunk)
    x = 16 // torch.empty((), dtype=dtype).element_size()
    used = -(-(context + chunk) // BLOCK)
    num_blocks = used + 8

    def randn(*shape: int) -> torch.Tensor:
        # Drawn in fp32 so that a seed gives the same values in any dtype.
        return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)

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
