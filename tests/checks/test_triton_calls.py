"""Rule no-triton-kernels on calls and references: a kernel called or handed on by its own name, through its module,
or through a name that says Triton; a function of the file is judged by its body, not by its name."""

from __future__ import annotations

from patcher.checks.no_triton_kernels import NoTritonKernels

from tests.fixtures_rules import errors_in

RULE = NoTritonKernels()


def test_the_kernel_called_by_its_own_name_or_through_its_module_is_found() -> None:
    code = """\
from vllm.attention.ops.prefix_prefill import context_attention_fwd
import vllm.attention.ops.triton_decode_attention as tda


def prefill(q, k, v):
    context_attention_fwd(q, k, v)
    return tda.decode_attention_fwd(q, k, v)
"""
    assert errors_in(RULE, code) == [
        (1, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (2, "imports vllm.attention.ops.triton_decode_attention "
            "(`import vllm.attention.ops.triton_decode_attention as tda`)"),
        (6, "calls context_attention_fwd(...)"),
        (7, "calls tda.decode_attention_fwd(...)"),
    ]


def test_a_known_kernel_name_called_without_any_import_is_still_the_kernel() -> None:
    assert errors_in(RULE, "def prefill(q):\n    return decode_attention_fwd(q)\n") == [
        (2, "calls decode_attention_fwd(...)"),
    ]


def test_a_function_of_a_kernel_module_called_through_the_module_is_found() -> None:
    code = """\
from vllm.attention.ops import triton_flash_attention as tfa
out = tfa.attention(q, k, v)
"""
    assert errors_in(RULE, code) == [
        (1, "imports triton_flash_attention as tfa from vllm.attention.ops"),
        (2, "calls tfa.attention(...) from vllm.attention.ops.triton_flash_attention"),
    ]


def test_a_kernel_module_imported_whole_and_called_through_its_full_name() -> None:
    code = """\
import vllm.attention.ops.triton_decode_attention
out = vllm.attention.ops.triton_decode_attention.decode(q)
"""
    assert errors_in(RULE, code) == [
        (1, "imports vllm.attention.ops.triton_decode_attention (`import vllm.attention.ops.triton_decode_attention`)"),
        (2, "calls vllm.attention.ops.triton_decode_attention.decode(...) from "
            "vllm.attention.ops.triton_decode_attention"),
    ]


def test_a_variable_named_like_a_kernel_module_is_not_the_module() -> None:
    # `prefix_prefill` here is a local flag object, not an imported module.
    code = """\
prefix_prefill = PrefillConfig()
prefix_prefill.apply(q)
"""
    assert errors_in(RULE, code) == []


def test_a_method_whose_name_says_triton_defined_elsewhere_is_flagged() -> None:
    code = """\
class Decoder:
    def run(self, q):
        return self.backend.decode_triton_v2(q)
"""
    assert errors_in(RULE, code) == [(3, "calls self.backend.decode_triton_v2(...), whose name says Triton")]


def test_a_function_whose_name_says_triton_but_is_defined_in_the_file_is_judged_by_its_body() -> None:
    code = """\
def _warn_triton_off():
    print("[paged_attn] Triton disabled on BI-V100")


class PagedAttention:
    def _triton_off(self):
        return None

    def forward(self, q):
        _warn_triton_off()
        self._triton_off()
        return use_triton_decode(q)
"""
    assert errors_in(RULE, code) == [(12, "calls use_triton_decode(...), whose name says Triton")]


def test_an_async_helper_of_the_file_named_like_triton_is_judged_by_its_body() -> None:
    code = """\
async def _triton_off_notice():
    print('[paged_attn] Triton disabled on BI-V100')

async def forward_prefix(q):
    await _triton_off_notice()
    return q
"""
    assert errors_in(RULE, code) == []


def test_a_reference_to_the_kernel_without_a_call_hands_it_on() -> None:
    code = """\
import vllm.attention.ops.prefix_prefill as pp
KERNELS = {'prefill': pp.context_attention_fwd}
register(handlers().context_attention_fwd)
"""
    assert errors_in(RULE, code) == [
        (1, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`)"),
        (2, "refers to pp.context_attention_fwd"),
        (3, "refers to context_attention_fwd"),
    ]
