"""Rule no-triton-kernels: the exact findings a user reads, for shapes its own examples leave open.

The rule's ``INVALID`` examples only ask that a message *contain* some
words; these tests pin every finding (path, line, severity, the whole
message) on realistic inputs: an engineer's Triton decode module, a wheel
named through a Dockerfile ``ENV``, a kernel module installed under
dist-packages, and so on. Each runs the rule the way ``patcher test`` does
(``run_example``): one file alone, or a small build context.
"""

from __future__ import annotations

from typing import Mapping

import pytest

from patcher.checks.base import Valid
from patcher.checks.examples import run_example
from patcher.checks.no_triton_kernels import NoTritonKernels
from patcher.checks.triton_installs import is_triton_project
from patcher.checks.triton_names import kernel_module, says_triton

RULE = NoTritonKernels()
HANG = "a hang cannot be caught by try/except"
SCRIPT = "qwen3_6_scripts/patch_ops.sh"
SHIPPED = "qwen3_6_scripts/paged_attn.py"
INSTALLS = ("in the image; Triton's kernels hang the BI-V100 "
            "(its runtime does not support the PTX Triton compiles)")
Finding = tuple[str, int, str, str]


def _found(code: str, *, files: Mapping[str, str] | None = None, path: str | None = None) -> list[Finding]:
    """Return (path, line, severity, message) for everything the rule reports, notes included."""
    example = Valid(code, files=dict(files or {}), path=path)
    return [(v.path, v.line, v.severity.value, v.message) for v in run_example(RULE, example)]


def _errors(code: str) -> list[tuple[int, str]]:
    """Return (line, message) of each finding in one file read alone (``example.py``)."""
    found = _found(code)
    assert all(path == "example.py" for path, *_ in found)
    return [(line, message) for _, line, _, message in found]


# -- one file ------------------------------------------------------------------


def test_a_sibling_triton_decode_module_imported_and_called_under_try() -> None:
    code = """\
# Triton V2 decode for sequences past 8K (tried first, PyTorch otherwise).
try:
    from .paged_attention_v2_triton import paged_attention_v2_triton
    _HAS_TRITON_V2 = True
except ImportError:
    _HAS_TRITON_V2 = False


def forward_decode(query, seq_lens, max_len):
    if _HAS_TRITON_V2 and max_len > 8192:
        try:
            return paged_attention_v2_triton(query, seq_lens)
        except Exception:
            pass
    return _forward_decode_pytorch(query, seq_lens)
"""
    assert _errors(code) == [
        (3, f"imports paged_attention_v2_triton from .paged_attention_v2_triton, under `try:` ({HANG})"),
        (12, "calls paged_attention_v2_triton(...), imported from .paged_attention_v2_triton, "
             f"under `try:` ({HANG})"),
    ]


def test_an_import_under_if_names_the_test_as_written() -> None:
    code = ("import torch\n"
            "if torch.cuda.is_available() and not _IS_BI100:\n"
            "    from vllm.attention.ops.prefix_prefill import context_attention_fwd as _ctx_fwd\n")
    assert _errors(code) == [
        (3, "imports context_attention_fwd as _ctx_fwd from vllm.attention.ops.prefix_prefill, "
            "under `if torch.cuda.is_available() and not _IS_BI100:`"),
    ]


def test_the_else_branch_and_the_handler_of_a_guard_say_where_they_are() -> None:
    code = """\
if _USE_PYTORCH_PREFILL:
    pass
else:
    from vllm.attention.ops import prefix_prefill
try:
    import numpy
except ImportError:
    from vllm.attention.ops.triton_flash_attention import triton_attention
"""
    assert _errors(code) == [
        (4, "imports prefix_prefill from vllm.attention.ops, under `if _USE_PYTORCH_PREFILL:`"),
        # A handler is not the try body: the message does not blame `try:` for it.
        (8, "imports triton_attention from vllm.attention.ops.triton_flash_attention"),
    ]


def test_a_guard_outside_the_function_is_not_the_functions_guard() -> None:
    code = """\
if HAVE_KERNELS:
    def prefill(q):
        from vllm.attention.ops.prefix_prefill import context_attention_fwd
        return context_attention_fwd(q)
"""
    assert _errors(code) == [
        (3, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (4, "calls context_attention_fwd(...)"),
    ]


def test_a_lambda_does_not_hide_the_guard_around_it() -> None:
    code = ("if HAS_KERNEL:\n"
            "    PREFILL = lambda q: context_attention_fwd(q)\n")
    assert _errors(code) == [(2, "calls context_attention_fwd(...), under `if HAS_KERNEL:`")]


def test_calling_the_kernel_by_its_own_name_and_through_its_module() -> None:
    code = """\
from vllm.attention.ops.prefix_prefill import context_attention_fwd
import vllm.attention.ops.triton_decode_attention as tda


def prefill(q, k, v):
    context_attention_fwd(q, k, v)
    return tda.decode_attention_fwd(q, k, v)
"""
    assert _errors(code) == [
        (1, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (2, "imports vllm.attention.ops.triton_decode_attention "
            "(`import vllm.attention.ops.triton_decode_attention as tda`)"),
        (6, "calls context_attention_fwd(...)"),
        (7, "calls tda.decode_attention_fwd(...)"),
    ]


def test_a_known_kernel_name_called_without_any_import_is_still_the_kernel() -> None:
    assert _errors("def prefill(q):\n    return decode_attention_fwd(q)\n") == [
        (2, "calls decode_attention_fwd(...)"),
    ]


def test_a_function_of_a_kernel_module_called_through_the_module() -> None:
    code = ("from vllm.attention.ops import triton_flash_attention as tfa\n"
            "out = tfa.attention(q, k, v)\n")
    assert _errors(code) == [
        (1, "imports triton_flash_attention as tfa from vllm.attention.ops"),
        (2, "calls tfa.attention(...) from vllm.attention.ops.triton_flash_attention"),
    ]


def test_a_variable_named_like_a_kernel_module_is_not_the_module() -> None:
    # `prefix_prefill` here is a local flag object, not an imported module.
    code = ("prefix_prefill = PrefillConfig()\n"
            "prefix_prefill.apply(q)\n")
    assert _errors(code) == []


def test_a_method_whose_name_says_triton_defined_elsewhere() -> None:
    code = ("class Decoder:\n"
            "    def run(self, q):\n"
            "        return self.backend.decode_triton_v2(q)\n")
    assert _errors(code) == [(3, "calls self.backend.decode_triton_v2(...), whose name says Triton")]


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
    assert _errors(code) == [(12, "calls use_triton_decode(...), whose name says Triton")]


def test_a_triton_compile_call_and_a_launch_through_an_attribute() -> None:
    code = """\
import triton
import triton.language as tl


def _body(x_ptr, BLOCK: tl.constexpr):
    pass


_kernel = triton.jit(_body)


class Ops:
    kernel = _kernel


def run(x):
    Ops.kernel[(1,)](x)
"""
    assert _errors(code) == [
        (9, "compiles a Triton kernel (`triton.jit(_body)`)"),
    ]


def test_a_kernel_launched_through_an_object_attribute_is_a_launch() -> None:
    code = """\
import triton


@triton.jit
def _decode(x):
    pass


class Launcher:
    fn = _decode

    def go(self, x):
        self.ops._decode[(x.shape[0],)](x)
"""
    assert _errors(code) == [
        (4, "defines the Triton kernel _decode (`@triton.jit`)"),
        (13, "launches the Triton kernel _decode (`self.ops._decode[(x.shape[0],)](...)`)"),
    ]


def test_a_subscript_call_of_something_else_is_no_launch() -> None:
    assert _errors("import triton\nhandlers = {}\nhandlers['decode'](q)\ncaches[0](q)\n") == []


def test_a_bare_autotune_from_triton_compiles_a_kernel() -> None:
    code = ("from triton import autotune, Config\n"
            "decode = autotune(configs=[Config({'BLOCK': 64})], key=['n'])(decode_body)\n")
    assert _errors(code) == [
        (2, "compiles a Triton kernel (`autotune(configs=[Config({'BLOCK': 64})], key=['n'])`)"),
    ]


def test_a_decorator_from_another_package_named_jit_is_no_kernel() -> None:
    code = ("import numba\nimport torch\n\n"
            "@numba.jit\ndef a(x):\n    return x\n\n"
            "@torch.jit.script\ndef b(x):\n    return x\n\n"
            "@jit\ndef c(x):\n    return x  # triton? no: an undefined name\n")
    assert _errors(code) == []


def test_a_decorator_named_like_triton_but_not_a_kernel_decorator() -> None:
    assert _errors("import triton\n\n@triton.testing.perf_report\ndef bench(x):\n    pass\n") == []


def test_jit_imported_from_deep_in_triton_is_triton_s_jit() -> None:
    code = "from triton.runtime.jit import jit\n\n\n@jit\ndef _k(x):\n    pass\n"
    assert _errors(code) == [(4, "defines the Triton kernel _k (`@jit`)")]


def test_a_kernel_defined_under_a_guard_and_called_without_a_grid() -> None:
    code = ("import triton\n"
            "if HAS_TRITON:\n"
            "    @triton.jit\n"
            "    def _k(x):\n"
            "        pass\n"
            "def run(x):\n"
            "    return _k(x)\n")
    assert _errors(code) == [
        (3, "defines the Triton kernel _k (`@triton.jit`), under `if HAS_TRITON:`"),
        (7, "calls _k(...)"),
    ]


def test_the_switch_set_under_a_guard_says_so() -> None:
    code = ("import os\n"
            "if os.environ.get('PA_TRITON') == '1':\n"
            "    HAS_TRITON = True\n")
    assert _errors(code) == [
        (3, "sets HAS_TRITON = True, which turns the Triton prefill path back on, "
            "under `if os.environ.get('PA_TRITON') == '1':`"),
    ]


def test_async_kernels_are_found_too() -> None:
    code = "import triton\n\n\n@triton.jit\nasync def _k(x):\n    pass\n"
    assert _errors(code) == [(4, "defines the Triton kernel _k (`@triton.jit`)")]


def test_a_second_decorator_of_the_same_kernel_is_one_finding() -> None:
    code = "import triton\n\n@triton.jit\n@triton.jit\ndef _k(x):\n    pass\n"
    assert _errors(code) == [(3, "defines the Triton kernel _k (`@triton.jit`)")]


def test_star_imports_of_a_kernel_module_other_than_prefix_prefill() -> None:
    code = ("from vllm.attention.ops.triton_decode_attention import *\n"
            "from vllm.triton_utils import *\n"
            "from vllm.attention.ops.paged_attn import *\n")
    assert _errors(code) == [
        (1, "star-imports the kernels from vllm.attention.ops.triton_decode_attention "
            "(`from vllm.attention.ops.triton_decode_attention import *`)"),
    ]


def test_a_star_import_of_prefix_prefill_names_its_kernel_and_its_guard() -> None:
    code = ("try:\n"
            "    from vllm.attention.ops.prefix_prefill import *\n"
            "except ImportError:\n"
            "    context_attention_fwd = None\n")
    assert _errors(code) == [
        (2, "star-imports context_attention_fwd from vllm.attention.ops.prefix_prefill "
            f"(`from vllm.attention.ops.prefix_prefill import *`), under `try:` ({HANG})"),
    ]


def test_a_star_import_does_not_stop_the_reading_of_later_imports() -> None:
    code = ("from vllm.attention.ops.paged_attn import *\n"
            "from vllm.attention.ops.prefix_prefill import context_attention_fwd\n")
    assert _errors(code) == [(2, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill")]


def test_an_excepted_name_does_not_stop_the_reading_of_the_names_after_it() -> None:
    assert _errors("from vllm import triton_utils, triton_kernels\n") == [(1, "imports triton_kernels from vllm")]


def test_a_kernel_module_imported_whole_and_called_through_its_full_name() -> None:
    code = ("import vllm.attention.ops.triton_decode_attention\n"
            "out = vllm.attention.ops.triton_decode_attention.decode(q)\n")
    assert _errors(code) == [
        (1, "imports vllm.attention.ops.triton_decode_attention (`import vllm.attention.ops.triton_decode_attention`)"),
        (2, "calls vllm.attention.ops.triton_decode_attention.decode(...) from "
            "vllm.attention.ops.triton_decode_attention"),
    ]


def test_names_from_triton_utils_and_from_triton_itself_are_not_kernels() -> None:
    code = ("from vllm import triton_utils\n"
            "from vllm.triton_utils.custom_cache_manager import maybe_set_triton_cache_manager\n"
            "from triton import cdiv, next_power_of_2\n"
            "from triton.runtime import triton_key\n"
            "maybe_set_triton_cache_manager()\n"
            "triton_utils.maybe_set_triton_cache_manager()\n")
    assert _errors(code) == []


def test_an_imported_name_that_says_triton_is_flagged_with_its_module() -> None:
    code = "from vllm.model_executor.layers.ops import triton_rms_norm\n"
    assert _errors(code) == [(1, "imports triton_rms_norm from vllm.model_executor.layers.ops")]


def test_plain_imports_of_a_kernel_module_and_of_the_kernel_name() -> None:
    code = ("import triton.ops\n"
            "import vllm.attention.ops.prefix_prefill\n"
            "import triton\n"
            "import vllm.triton_utils\n"
            "import mylib.context_attention_fwd\n")
    assert _errors(code) == [
        (1, "imports triton.ops (`import triton.ops`)"),
        (2, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill`)"),
        (5, "imports mylib.context_attention_fwd (`import mylib.context_attention_fwd`)"),
    ]


def test_a_reference_to_the_kernel_without_a_call_hands_it_on() -> None:
    code = ("import vllm.attention.ops.prefix_prefill as pp\n"
            "KERNELS = {'prefill': pp.context_attention_fwd}\n"
            "register(handlers().context_attention_fwd)\n")
    assert _errors(code) == [
        (1, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`)"),
        (2, "refers to pp.context_attention_fwd"),
        (3, "refers to context_attention_fwd"),
    ]


@pytest.mark.parametrize("call, message", [
    ("importlib.import_module('vllm.attention.ops.prefix_prefill')",
     "imports vllm.attention.ops.prefix_prefill dynamically "
     "(`importlib.import_module('vllm.attention.ops.prefix_prefill')`)"),
    ("__import__('mylib.kernels.context_attention_fwd')",
     "imports mylib.kernels.context_attention_fwd dynamically (`__import__('mylib.kernels.context_attention_fwd')`)"),
    ("getattr(ops, 'prefix_prefill')", "looks up prefix_prefill by name (`getattr(ops, 'prefix_prefill')`)"),
    ("getattr(ops, 'triton_attention')", "looks up triton_attention by name (`getattr(ops, 'triton_attention')`)"),
])
def test_dynamic_imports_and_lookups_by_name(call: str, message: str) -> None:
    assert _errors(f"import importlib\nkernel = {call}\n") == [(2, message)]


@pytest.mark.parametrize("call", [
    "importlib.import_module('vllm.attention.ops.paged_attn')",
    "importlib.import_module(name)",
    "getattr(ops, 'paged_attention_v1')",
    "getattr(ops, 'context_attention_fwd_pytorch')",
    "load('vllm.attention.ops.prefix_prefill')",
])
def test_dynamic_lookups_of_other_things_are_fine(call: str) -> None:
    assert _errors(f"import importlib\n# not triton\nkernel = {call}\n") == []


def test_the_switch_set_in_several_ways() -> None:
    code = ("from vllm import triton_utils\n"
            "HAS_TRITON = 1\n"
            "triton_utils.HAS_TRITON = _ok = True\n"
            "HAS_TRITON = False\n"
            "HAS_TRITON = 0\n"
            "HAS_TRITON = 'yes'\n"
            "HAS_TRITON: bool\n"
            "HAS_TRITON_V2 = True\n")
    assert _errors(code) == [
        (2, "sets HAS_TRITON = True, which turns the Triton prefill path back on"),
        (3, "sets triton_utils.HAS_TRITON = True, which turns the Triton prefill path back on"),
    ]


def test_findings_come_out_by_line_then_by_message() -> None:
    code = ("from vllm.attention.ops.prefix_prefill import context_attention_fwd; HAS_TRITON = True\n"
            "from vllm.attention.ops import prefix_prefill, triton_flash_attention\n")
    assert _errors(code) == [
        (1, "imports context_attention_fwd from vllm.attention.ops.prefix_prefill"),
        (1, "sets HAS_TRITON = True, which turns the Triton prefill path back on"),
        (2, "imports prefix_prefill from vllm.attention.ops"),
        (2, "imports triton_flash_attention from vllm.attention.ops"),
    ]


def test_code_that_cannot_run_is_a_note_with_the_reason() -> None:
    code = ("import vllm.attention.ops.prefix_prefill as pp\n"
            "def prefill(q):\n"
            "    prefill_ok = False\n"
            "    if prefill_ok:\n"
            "        return pp.context_attention_fwd(q)\n"
            "    return q\n")
    assert _found(code) == [
        ("example.py", 1, "error",
         "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`)"),
        ("example.py", 5, "note", "calls pp.context_attention_fwd(...), under `if prefill_ok:`: "
                                  "cannot run: `prefill_ok` is always False here (line 3)"),
    ]


def test_a_file_without_any_of_the_words_is_not_read() -> None:
    # It would not even parse: the pre-filter never gets that far.
    assert _errors("def f(:\n    return prefill(q)\n") == []


@pytest.mark.parametrize("code, finding", [
    # Each file holds one word of the pre-filter and no other.
    ("from mylib import TritonDecode\n", (1, "imports TritonDecode from mylib")),
    ("HAS_TRITON = True\n", (1, "sets HAS_TRITON = True, which turns the Triton prefill path back on")),
    ("import vllm.attention.ops.prefix_prefill as pp\n",
     (1, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`)")),
    ("import vllm.attention.ops.triton_decode_attention as tda\n",
     (1, "imports vllm.attention.ops.triton_decode_attention (`import vllm.attention.ops.triton_decode_attention as tda`)")),
    ("out = decode_attention_fwd(q)\n", (1, "calls decode_attention_fwd(...)")),
    ("fn = ops.context_attention_fwd\n", (1, "refers to ops.context_attention_fwd")),
])
def test_each_word_of_the_pre_filter_lets_the_file_be_read(code: str, finding: tuple[int, str]) -> None:
    assert _errors(code) == [finding]


# -- the helpers' contracts --------------------------------------------------------


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
def test_kernel_module(module: str, expected: bool) -> None:
    assert kernel_module(module) is expected


@pytest.mark.parametrize("name, expected", [("TritonDecode", True), ("paged_attention_v2_triton", True),
                                            ("TRITON", True), ("tritium", False)])
def test_says_triton(name: str, expected: bool) -> None:
    assert says_triton(name) is expected


@pytest.mark.parametrize("project, expected", [
    ("triton", True), ("triton-nightly", True), ("pytorch-triton", True), ("pytorch-triton-rocm", True),
    ("tritonclient", False), ("triton-", True), ("my-tritonic", False), ("xtriton", False), ("tritonx-y", False),
])
def test_is_triton_project(project: str, expected: bool) -> None:
    assert is_triton_project(project) is expected


# -- install steps ------------------------------------------------------------------


def _dockerfile(*lines: str) -> str:
    return "\n".join(["FROM base", *lines, "WORKDIR /workspace/",
                      "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                      "RUN cd ./qwen3_6_scripts && ./patch_ops.sh", ""])


def test_a_wheel_named_by_a_dockerfile_env_and_installed_by_the_script() -> None:
    dockerfile = _dockerfile("ENV WHEEL=/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl",
                             "ENV HF_HOME=/models")
    script = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/\n" \
             "pip install --no-deps $WHEEL\n"
    assert _found(script, path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        (SCRIPT, 3, "error", f"installs Triton (`/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


def test_a_wheel_named_by_the_dockerfile_s_only_env_and_installed_by_the_script() -> None:
    dockerfile = _dockerfile("ARG WHEEL=/wheels/pytorch_triton-3.0.0-cp310-cp310-linux_x86_64.whl")
    assert _found("set -e\npip install $WHEEL\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        (SCRIPT, 2, "error",
         f"installs Triton (`/wheels/pytorch_triton-3.0.0-cp310-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


def test_an_env_that_names_triton_for_something_else_installs_nothing() -> None:
    dockerfile = _dockerfile("ENV TRITON_CACHE_DIR=/tmp/triton", "ENV PKG=transformers==4.57.1")
    assert _found("set -e\npip install $PKG\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == []


def test_a_dockerfile_run_that_installs_triton_is_reported_in_the_dockerfile() -> None:
    dockerfile = _dockerfile("RUN pip3 install --no-cache-dir pytorch-triton==3.0.0 && rm -rf /root/.cache")
    assert _found("set -e\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        ("Dockerfile", 2, "error", f"installs Triton (`pytorch-triton==3.0.0`) {INSTALLS}"),
    ]


def test_a_script_that_only_mentions_triton_in_capitals_is_still_read() -> None:
    script = "set -e\n# TRITON build for the other card family\nWHL=./Triton-2.1.0-cp310-linux_x86_64.whl\n" \
             "pip install $WHL\n"
    assert _found(script, path=SCRIPT) == [
        (SCRIPT, 4, "error", f"installs Triton (`./Triton-2.1.0-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


# -- kernels defined in another shipped file ----------------------------------------

KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def _qk_kernel(q_ptr, k_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


@triton.jit
def _pv_kernel(p_ptr, v_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def decode(q, k, v):
    _qk_kernel[(1,)](q, k, BLOCK=64)
    _pv_kernel[(1,)](q, v, BLOCK=64)
"""
def _defined(path: str) -> list[Finding]:
    return [
        (path, 5, "error", "defines the Triton kernel _qk_kernel (`@triton.jit`)"),
        (path, 10, "error", "defines the Triton kernel _pv_kernel (`@triton.jit`)"),
        (path, 16, "error", "launches the Triton kernel _qk_kernel (`_qk_kernel[(1,)](...)`)"),
        (path, 17, "error", "launches the Triton kernel _pv_kernel (`_pv_kernel[(1,)](...)`)"),
    ]


def _imports(path: str, line: int, module: str, target: str) -> Finding:
    return (path, line, "error", f"imports {module} ({target}), which defines the Triton kernels _qk_kernel, _pv_kernel")


OPS = "/usr/local/lib/python3.10/dist-packages/vllm/attention/ops"


@pytest.mark.parametrize("root", ["dist-packages", "site-packages"])
def test_a_kernel_module_the_script_installs_is_found_by_its_package_name(root: str) -> None:
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\n"
              f"cp ./fast_decode.py /usr/lib/python3/{root}/vllm/attention/ops/fast_decode.py\n")
    code = "# the shipped paged_attn.py\nfrom vllm.attention.ops.fast_decode import decode\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert _found(code, files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 2, "vllm.attention.ops.fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_a_kernel_module_the_dockerfile_copies_into_site_packages() -> None:
    dockerfile = _dockerfile("COPY ./fast_decode.py /opt/venv/lib/python3.10/site-packages/vllm/fast_decode.py")
    code = "import vllm.fast_decode as fd\n"
    assert _found(code, files={"Dockerfile": dockerfile, "fast_decode.py": KERNELS}) == [
        *_defined("fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.fast_decode", "fast_decode.py"),
    ]


def test_a_kernel_package_installed_as_a_folder_is_found_by_its_package_name() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp -r ./fastk {OPS}/\n"
    code = "from vllm.attention.ops.fastk import decode\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fastk/__init__.py": KERNELS}
    assert _found(code, files=files) == [
        *_defined("qwen3_6_scripts/fastk/__init__.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops.fastk", "qwen3_6_scripts/fastk/__init__.py"),
    ]


@pytest.mark.parametrize("code, module", [
    ("from .fastk import decode\n", ".fastk"),
    ("import fastk\n", "fastk"),
    ("from . import fastk\n", "."),
])
def test_a_sibling_kernel_package_is_found_however_it_is_imported(code: str, module: str) -> None:
    files = {"qwen3_6_scripts/fastk/__init__.py": KERNELS}
    assert _found(code, files=files) == [
        *_defined("qwen3_6_scripts/fastk/__init__.py"),
        _imports(SHIPPED, 1, module, "qwen3_6_scripts/fastk/__init__.py"),
    ]


def test_a_relative_import_two_levels_up() -> None:
    code = "from ..fast_decode import decode\n"
    files = {"qwen3_6_scripts/fast_decode.py": KERNELS}
    assert _found(code, path="qwen3_6_scripts/qwen3_5/model.py", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports("qwen3_6_scripts/qwen3_5/model.py", 1, "..fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_a_relative_import_of_a_module_in_a_subfolder_and_of_the_package_itself() -> None:
    files = {"qwen3_6_scripts/kern/fast.py": KERNELS, "qwen3_6_scripts/kern/__init__.py": "",
             "qwen3_6_scripts/kern/use.py": "from . import fast\nfrom .fast import decode\n"}
    found = _found("from .kern.fast import decode\nfrom .kern import other\n", files=files)
    assert found == [
        *_defined("qwen3_6_scripts/kern/fast.py"),
        _imports("qwen3_6_scripts/kern/use.py", 1, ".", "qwen3_6_scripts/kern/fast.py"),
        _imports("qwen3_6_scripts/kern/use.py", 2, ".fast", "qwen3_6_scripts/kern/fast.py"),
        _imports(SHIPPED, 1, ".kern.fast", "qwen3_6_scripts/kern/fast.py"),
    ]


def test_a_module_of_the_same_name_elsewhere_is_not_the_kernel_module() -> None:
    # fast_decode.py sits in a subfolder, not beside the importer, and no script installs it.
    files = {"qwen3_6_scripts/sub/fast_decode.py": KERNELS,
             "qwen3_6_scripts/other.py": "import fast_decode\nimport os.fast_decode\nfrom . import fast_decode\n"}
    assert _found("from .other import x\n", files=files) == _defined("qwen3_6_scripts/sub/fast_decode.py")


def test_an_import_of_a_kernel_module_that_cannot_run_is_a_note() -> None:
    code = "if False:\n    from .fast_decode import decode\n"
    assert _found(code, files={"qwen3_6_scripts/fast_decode.py": KERNELS}) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        (SHIPPED, 2, "note", "imports .fast_decode (qwen3_6_scripts/fast_decode.py), which defines the Triton "
                             "kernels _qk_kernel, _pv_kernel, under `if False:`: cannot run: its test `False` is "
                             "always false"),
    ]


def test_a_kernel_module_that_imports_itself_or_says_triton_is_reported_once() -> None:
    named = KERNELS + "\nfrom . import fast_decode_triton\n"
    files = {"qwen3_6_scripts/fast_decode_triton.py": named}
    found = _found("from .fast_decode_triton import decode\n", files=files)
    # The file rule flags the import whose name says Triton; the tree rule adds nothing for it.
    assert [f for f in found if f[0] == SHIPPED] == [
        (SHIPPED, 1, "error", "imports decode from .fast_decode_triton"),
    ]
    assert [f for f in found if "which defines" in f[3]] == []


def test_an_import_of_the_package_that_holds_a_kernel_module() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp ./fast_decode.py {OPS}/fast_decode.py\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert _found("from vllm.attention.ops import fast_decode\n", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_one_import_of_two_kernel_modules_names_each() -> None:
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp ./fast_decode.py {OPS}/fast_decode.py\n"
              f"cp ./fast_prefill.py {OPS}/fast_prefill.py\n")
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS, "qwen3_6_scripts/fast_prefill.py": KERNELS}
    found = _found("from vllm.attention.ops import fast_decode, fast_prefill\n", files=files)
    assert [f for f in found if f[0] == SHIPPED] == [
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_prefill.py"),
    ]


def test_an_import_the_file_rule_flags_does_not_hide_the_next_one() -> None:
    code = "from .paged_attention_v2_triton import decode_v2\nfrom .fast_decode import decode\n"
    files = {"qwen3_6_scripts/paged_attention_v2_triton.py": KERNELS, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert [f for f in _found(code, files=files) if f[0] == SHIPPED] == [
        (SHIPPED, 1, "error", "imports decode_v2 from .paged_attention_v2_triton"),
        _imports(SHIPPED, 2, ".fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


@pytest.mark.parametrize("broken", [
    "# notes on the triton port, half written\ndef decode(:\n",  # mentions triton: read for kernels
    "import pa_kernels\ndef decode(:\n",  # mentions the kernel module: read for imports
])
def test_a_shipped_file_that_does_not_parse_does_not_stop_the_reading_of_the_others(broken: str) -> None:
    files = {"qwen3_6_scripts/a_draft.py": broken, "qwen3_6_scripts/pa_kernels.py": KERNELS}
    assert [f for f in _found("from .pa_kernels import decode\n", files=files) if f[0] == SHIPPED] == [
        _imports(SHIPPED, 1, ".pa_kernels", "qwen3_6_scripts/pa_kernels.py"),
    ]


def test_a_kernel_module_installed_under_another_name_is_found_by_that_name() -> None:
    # The script ships its own decode module in place of the vendor's: the image imports it by the new name.
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\n"
              f"cp ./fast_decode_v2.py {OPS}/fast_decode.py\n")
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode_v2.py": KERNELS}
    assert _found("from vllm.attention.ops import fast_decode\n", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode_v2.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode_v2.py"),
    ]


def test_an_ordinary_name_before_a_kernel_in_one_import_does_not_hide_it() -> None:
    code = "from vllm.attention.ops import paged_attn, prefix_prefill\n"
    assert _errors(code) == [(1, "imports prefix_prefill from vllm.attention.ops")]


def test_plain_imports_and_references_say_which_guard_they_sit_under() -> None:
    code = ("try:\n"
            "    import vllm.attention.ops.prefix_prefill as pp\n"
            "except ImportError:\n"
            "    pp = None\n"
            "if pp is not None:\n"
            "    PREFILL = pp.context_attention_fwd\n")
    assert _errors(code) == [
        (2, "imports vllm.attention.ops.prefix_prefill (`import vllm.attention.ops.prefix_prefill as pp`), "
            f"under `try:` ({HANG})"),
        (6, "refers to pp.context_attention_fwd, under `if pp is not None:`"),
    ]


def test_an_async_helper_of_the_file_named_like_triton_is_judged_by_its_body() -> None:
    code = ("async def _triton_off_notice():\n"
            "    print('[paged_attn] Triton disabled on BI-V100')\n"
            "\n"
            "async def forward_prefix(q):\n"
            "    await _triton_off_notice()\n"
            "    return q\n")
    assert _errors(code) == []


def test_an_annotated_switch_set_false_is_fine() -> None:
    assert _errors("from vllm.triton_utils import HAS_TRITON\nHAS_TRITON: bool = False\n") == []
