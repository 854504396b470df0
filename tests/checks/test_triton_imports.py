"""Rule no-triton-kernels on imports: every way a file can import a Triton kernel, a kernel module or a name that says Triton.

Static (plain, ``from``, aliased, ``*``) and dynamic (``import_module``,
``__import__``, ``getattr`` by name) imports are found; ``vllm.triton_utils``
(cache management) and Triton's own helpers are not kernels. Each finding is
asserted whole, as ``check`` prints it.
"""

from __future__ import annotations

import pytest

from patcher.checks.no_triton_kernels import NoTritonKernels
from patcher.checks.triton_names import kernel_module, says_triton

from tests.fixtures_rules import HANG, errors_in, findings

RULE = NoTritonKernels()


def test_a_plain_import_of_a_kernel_module_or_of_the_kernel_name_is_found() -> None:
    code = """\
import triton.ops
import vllm.attention.ops.prefix_prefill
import triton
import vllm.triton_utils
import mylib.context_attention_fwd
"""
    assert errors_in(RULE, code) == [
        (1, "imports triton.ops (`import triton.ops`)"),
        (2, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill`)"),
        (5, "imports mylib.context_attention_fwd (`import mylib.context_attention_fwd`)"),
    ]


def test_an_imported_name_that_says_triton_is_flagged_with_its_module() -> None:
    code = "from vllm.model_executor.layers.ops import triton_rms_norm\n"
    assert errors_in(RULE, code) == [(1, "imports triton_rms_norm from vllm.model_executor.layers.ops")]


def test_an_ordinary_name_before_a_kernel_in_one_import_does_not_hide_it() -> None:
    code = "from vllm.attention.ops import paged_attn, prefix_prefill\n"
    assert errors_in(RULE, code) == [(1, "imports prefix_prefill from vllm.attention.ops")]


def test_an_excepted_name_does_not_stop_the_reading_of_the_names_after_it() -> None:
    assert errors_in(RULE, "from vllm import triton_utils, triton_kernels\n") == [(1, "imports triton_kernels from vllm")]


def test_names_from_triton_utils_and_from_triton_itself_are_not_kernels() -> None:
    code = """\
from vllm import triton_utils
from vllm.triton_utils.custom_cache_manager import maybe_set_triton_cache_manager
from triton import cdiv, next_power_of_2
from triton.runtime import triton_key
maybe_set_triton_cache_manager()
triton_utils.maybe_set_triton_cache_manager()
"""
    assert errors_in(RULE, code) == []


def test_a_star_import_of_a_kernel_module_is_found_and_of_triton_utils_is_not() -> None:
    code = """\
from vllm.attention.ops.triton_decode_attention import *
from vllm.triton_utils import *
from vllm.attention.ops.paged_attn import *
"""
    assert errors_in(RULE, code) == [
        (1, "star-imports the kernels from vllm.attention.ops.triton_decode_attention "
            "(`from vllm.attention.ops.triton_decode_attention import *`)"),
    ]


def test_a_star_import_of_prefix_prefill_names_its_kernel_and_its_guard() -> None:
    code = """\
try:
    from vllm.attention.ops.prefix_prefill import *
except ImportError:
    context_attention_fwd = None
"""
    assert errors_in(RULE, code) == [
        (2, "star-imports context_attention_fwd from vllm.attention.ops.prefix_prefill "
            f"(`from vllm.attention.ops.prefix_prefill import *`), under `try:` ({HANG})"),
    ]


def test_a_star_import_does_not_stop_the_reading_of_later_imports() -> None:
    code = """\
from vllm.attention.ops.paged_attn import *
from vllm.attention.ops.prefix_prefill import context_attention_fwd
"""
    assert errors_in(RULE, code) == [(2, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill")]


@pytest.mark.parametrize("call, message", [
    ("importlib.import_module('vllm.attention.ops.prefix_prefill')",
     "imports vllm.attention.ops.prefix_prefill dynamically "
     "(`importlib.import_module('vllm.attention.ops.prefix_prefill')`)"),
    ("__import__('mylib.kernels.context_attention_fwd')",
     "imports mylib.kernels.context_attention_fwd dynamically (`__import__('mylib.kernels.context_attention_fwd')`)"),
    ("getattr(ops, 'prefix_prefill')", "looks up prefix_prefill by name (`getattr(ops, 'prefix_prefill')`)"),
    ("getattr(ops, 'triton_attention')", "looks up triton_attention by name (`getattr(ops, 'triton_attention')`)"),
])
def test_dynamic_imports_and_lookups_by_name_of_a_kernel_are_found(call: str, message: str) -> None:
    assert errors_in(RULE, f"import importlib\nkernel = {call}\n") == [(2, message)]


@pytest.mark.parametrize("call", [
    "importlib.import_module('vllm.attention.ops.paged_attn')",
    "importlib.import_module(name)",
    "getattr(ops, 'paged_attention_v1')",
    "getattr(ops, 'context_attention_fwd_pytorch')",
    "load('vllm.attention.ops.prefix_prefill')",
])
def test_dynamic_lookups_of_other_things_are_fine(call: str) -> None:
    assert errors_in(RULE, f"import importlib\n# not triton\nkernel = {call}\n") == []


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
    assert findings(RULE, code) == [
        ("example.py", 12, "error", "looks up context_attention_fwd by name "
                                    "(`getattr(ops, \"context_attention_fwd\", None)`)"),
    ]


def test_findings_come_out_by_line_then_by_message() -> None:
    code = """\
from vllm.attention.ops.prefix_prefill import context_attention_fwd; HAS_TRITON = True
from vllm.attention.ops import prefix_prefill, triton_flash_attention
"""
    assert errors_in(RULE, code) == [
        (1, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (1, "sets HAS_TRITON = True, which turns the Triton prefill path back on"),
        (2, "imports prefix_prefill from vllm.attention.ops"),
        (2, "imports triton_flash_attention from vllm.attention.ops"),
    ]


@pytest.mark.parametrize("module, expected", [
    ("vllm.attention.ops.prefix_prefill", True),
    ("triton.ops", True),
    ("triton.ops.flash_attention", True),
    ("triton", False),
    ("triton.language", False),
    ("vllm.triton_utils", False),
    ("vllm.triton_utils.importing", False),
    ("vllm.triton_utilsx", True),  # a name that says Triton, not the excepted module
    ("mylib.TritonDecode", True),
    ("", False),
    ("..", False),
    (".kernels", False),
    (".paged_attention_v2_triton", True),
])
def test_a_kernel_module_is_one_named_for_kernels_or_triton_but_not_triton_utils(module: str, expected: bool) -> None:
    assert kernel_module(module) is expected


@pytest.mark.parametrize("name, expected", [("TritonDecode", True), ("paged_attention_v2_triton", True),
                                            ("TRITON", True), ("tritium", False)])
def test_a_name_says_triton_in_any_case_but_not_as_part_of_another_word(name: str, expected: bool) -> None:
    assert says_triton(name) is expected
