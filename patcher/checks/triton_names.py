"""Name what says Triton in Python code: the known kernels and their modules, the decorators, the switch.

Rule no-triton-kernels reads a file's imports, calls and decorators
against these; ``vllm.triton_utils`` (tensor-parallel cache management)
is the one Triton-named module the image needs.
"""

from __future__ import annotations

KERNEL = "context_attention_fwd"  # vllm/attention/ops/prefix_prefill.py
# Functions known to launch Triton kernels, and the modules that define them.
KERNELS = frozenset({KERNEL, "triton_attention", "decode_attention_fwd"})
KERNEL_MODULES = frozenset({"prefix_prefill", "triton_flash_attention", "triton_decode_attention"})
# The image uses vllm.triton_utils for tensor-parallel cache management, not for kernels.
ALLOWED_MODULE = "vllm.triton_utils"
TRITON = "triton"
DECORATORS = frozenset({"jit", "autotune", "heuristics"})  # triton.jit, triton.autotune, triton.heuristics
SWITCH = "HAS_TRITON"
IMPORTERS = frozenset({"import_module", "__import__"})
# Any of these bytes must be in a file this rule can flag (a pre-filter before parsing).
WORDS = ("triton", "Triton", "TRITON", KERNEL, *KERNEL_MODULES, "decode_attention_fwd")
HANG = "a hang cannot be caught by try/except"
# What ``from MODULE import *`` binds of the names the rules look for (each module's ``__all__``: triton 2.1
# to 3.x, torch 2.1 to 2.13), so that ``from triton import *`` then ``@jit`` is ``@triton.jit``.
STAR_EXPORTS = {
    "triton": ("jit", "autotune", "heuristics"),
    "torch": ("compile",),
    "torch.compiler": ("compile",),
    "torch._dynamo": ("optimize", "optimize_assert"),
}


def says_triton(name: str) -> bool:
    """Tell whether a module or function name says Triton (``paged_attention_v2_triton``, ``TritonDecode``)."""
    return TRITON in name.lower()


def excepted(module: str) -> bool:
    """Tell whether ``module`` is ``vllm.triton_utils`` or in it: cache management, not kernels."""
    return module == ALLOWED_MODULE or module.startswith(ALLOWED_MODULE + ".")


def kernel_module(module: str) -> bool:
    """Tell whether importing ``module`` loads Triton kernels: a known kernel module, or one whose name says Triton.

    The ``triton`` package itself (``import triton``, ``triton.language``) is
    a compiler, not a kernel: the kernels it compiles are found by their
    ``@triton.jit`` decorators. ``triton.ops`` holds ready-made kernels.
    """
    parts = [p for p in module.split(".") if p]
    if not parts or excepted(module):
        return False
    if parts[0] == TRITON:
        return len(parts) > 1 and parts[1] == "ops"
    return any(p in KERNEL_MODULES or says_triton(p) for p in parts)
