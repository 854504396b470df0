"""Rule findings that mutation testing found unasserted (issue 13), pinned on realistic inputs.

A kernel module installed under an SDK folder whose own name holds
``dist-packages/`` (the import root is the last such folder), a ``getattr``
whose *default* is a kernel's name (a value, not a lookup), and a decode
that splits long sequences in two tiers under the threshold attribute (the
attribute is the threshold; a literal nested under it only splits what is
already past it).
"""

from __future__ import annotations

from typing import Any, Mapping

from patcher.checks.base import Valid
from patcher.checks.examples import run_example
from patcher.checks.no_triton_kernels import NoTritonKernels
from patcher.checks.v1_length_limit import V1LengthLimit

SCRIPT = "qwen3_6_scripts/patch_ops.sh"
SHIPPED = "qwen3_6_scripts/paged_attn.py"

# A Triton decode module an engineer dropped beside the shipped paged_attn.py.
FAST_DECODE = """\
import triton
import triton.language as tl


@triton.jit
def _decode_kernel(out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def decode(out, q):
    _decode_kernel[(q.shape[0],)](out, q, q.numel(), BLOCK=128)
"""


def _triton_found(code: str, files: Mapping[str, str] | None = None) -> list[tuple[str, int, str, str]]:
    example = Valid(code, files=dict(files or {}))
    return [(v.path, v.line, v.severity.value, v.message) for v in run_example(NoTritonKernels(), example)]


def test_the_import_root_is_the_last_dist_packages_folder_of_the_install_path() -> None:
    # The vendor SDK lives in a folder whose name ends in "dist-packages": the
    # module is imported from the Python's own dist-packages below it.
    ops = "/opt/corex-dist-packages/lib/python3/dist-packages/vllm/attention/ops"
    script = ("#!/bin/bash\n# install the patched ops into the SDK's Python\n"
              f"cp ./paged_attn.py {ops}/paged_attn.py\n"
              f"cp ./fast_decode.py {ops}/fast_decode.py\n")
    code = "# the shipped paged_attn.py\nfrom vllm.attention.ops.fast_decode import decode\n"
    kernel = "qwen3_6_scripts/fast_decode.py"
    assert _triton_found(code, {SCRIPT: script, kernel: FAST_DECODE}) == [
        (kernel, 5, "error", "defines the Triton kernel _decode_kernel (`@triton.jit`)"),
        (kernel, 11, "error", "launches the Triton kernel _decode_kernel (`_decode_kernel[(q.shape[0],)](...)`)"),
        (SHIPPED, 2, "error", f"imports vllm.attention.ops.fast_decode ({kernel}), "
                              "which defines the Triton kernel _decode_kernel"),
    ]


def test_a_kernel_name_as_getattr_default_is_a_value_not_a_lookup() -> None:
    code = """\
import os

from vllm import _custom_ops as ops


def attention_backend(config):
    # The default is the label the log shows, not a function looked up by name.
    return getattr(config, os.environ.get("ATTN_FIELD", "backend"), "triton_attention")


def prefill_kernel():
    return getattr(ops, "context_attention_fwd", None)
"""
    assert _triton_found(code) == [
        ("example.py", 12, "error", "looks up context_attention_fwd by name "
                                    "(`getattr(ops, \"context_attention_fwd\", None)`)"),
    ]


_TWO_TIERS = """\
class PagedAttention:
    # V1 fails past 32K on BI-V100: long contexts leave it.
    _PYTORCH_DECODE_THRESHOLD = {threshold}

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len):
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            # Past 64K only the gather-free PyTorch path fits; between, the chunked V2 substitute.
            if actual_max > 65536:
                return PagedAttention._forward_decode_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
            return PagedAttention._paged_attention_v2_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
        output = torch.empty_like(query)
        ops.paged_attention_v1(output, query, key_cache, value_cache, block_tables, seq_lens, max_seq_len)
        return output
"""


def _v1_found(code: str, params: Mapping[str, Any] | None = None) -> list[tuple[int, str]]:
    found = run_example(V1LengthLimit(), Valid(code, params=dict(params or {})))
    assert all(v.path == "example.py" and v.severity.value == "error" for v in found)
    return [(v.line, v.message) for v in found]


def test_a_literal_tier_nested_under_the_threshold_attribute_is_not_the_threshold() -> None:
    # Sequences up to the attribute reach V1; the 65536 only splits the longer ones.
    assert _v1_found(_TWO_TIERS.format(threshold=32768)) == []
    assert _v1_found(_TWO_TIERS.format(threshold=49152)) == [
        (3, "_PYTORCH_DECODE_THRESHOLD = 49152 sends sequences of 32769 to 49152 tokens to the V1 kernel "
            "(directly or after V2 fails), past its 32768-token limit"),
    ]
