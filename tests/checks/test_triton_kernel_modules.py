"""Rule no-triton-kernels across shipped files: an import of a shipped module that defines a kernel, whatever its name.

The imported module is found where the image puts it: beside the importer,
or where the install script or a Dockerfile ``COPY`` installs it (the import
root is the last ``dist-packages``/``site-packages`` folder of the path),
under the name it is installed as.
"""

from __future__ import annotations

import pytest

from patcher.checks.no_triton_kernels import NoTritonKernels

from tests.fixtures_rules import OPS, SCRIPT, Finding, build_dockerfile, findings
from tests.fixtures_vendor import SHIPPED

RULE = NoTritonKernels()

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


@pytest.mark.parametrize("root", ["dist-packages", "site-packages"])
def test_a_kernel_module_the_script_installs_is_found_by_its_package_name(root: str) -> None:
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\n"
              f"cp ./fast_decode.py /usr/lib/python3/{root}/vllm/attention/ops/fast_decode.py\n")
    code = "# the shipped paged_attn.py\nfrom vllm.attention.ops.fast_decode import decode\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert findings(RULE, code, files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 2, "vllm.attention.ops.fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_a_kernel_module_the_dockerfile_copies_into_site_packages() -> None:
    dockerfile = build_dockerfile("COPY ./fast_decode.py /opt/venv/lib/python3.10/site-packages/vllm/fast_decode.py")
    code = "import vllm.fast_decode as fd\n"
    assert findings(RULE, code, files={"Dockerfile": dockerfile, "fast_decode.py": KERNELS}) == [
        *_defined("fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.fast_decode", "fast_decode.py"),
    ]


def test_a_kernel_package_installed_as_a_folder_is_found_by_its_package_name() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp -r ./fastk {OPS}/\n"
    code = "from vllm.attention.ops.fastk import decode\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fastk/__init__.py": KERNELS}
    assert findings(RULE, code, files=files) == [
        *_defined("qwen3_6_scripts/fastk/__init__.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops.fastk", "qwen3_6_scripts/fastk/__init__.py"),
    ]


def test_a_kernel_module_installed_under_another_name_is_found_by_that_name() -> None:
    # The script ships its own decode module in place of the vendor's: the image imports it by the new name.
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\n"
              f"cp ./fast_decode_v2.py {OPS}/fast_decode.py\n")
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode_v2.py": KERNELS}
    assert findings(RULE, "from vllm.attention.ops import fast_decode\n", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode_v2.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode_v2.py"),
    ]


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


def test_the_import_root_is_the_last_dist_packages_folder_of_the_install_path() -> None:
    # The vendor SDK lives in a folder whose name ends in "dist-packages": the
    # module is imported from the Python's own dist-packages below it.
    ops = "/opt/corex-dist-packages/lib/python3/dist-packages/vllm/attention/ops"
    script = ("#!/bin/bash\n# install the patched ops into the SDK's Python\n"
              f"cp ./paged_attn.py {ops}/paged_attn.py\n"
              f"cp ./fast_decode.py {ops}/fast_decode.py\n")
    code = "# the shipped paged_attn.py\nfrom vllm.attention.ops.fast_decode import decode\n"
    kernel = "qwen3_6_scripts/fast_decode.py"
    assert findings(RULE, code, files={SCRIPT: script, kernel: FAST_DECODE}) == [
        (kernel, 5, "error", "defines the Triton kernel _decode_kernel (`@triton.jit`)"),
        (kernel, 11, "error", "launches the Triton kernel _decode_kernel (`_decode_kernel[(q.shape[0],)](...)`)"),
        (SHIPPED, 2, "error", f"imports vllm.attention.ops.fast_decode ({kernel}), "
                              "which defines the Triton kernel _decode_kernel"),
    ]


@pytest.mark.parametrize("code, module", [
    ("from .fastk import decode\n", ".fastk"),
    ("import fastk\n", "fastk"),
    ("from . import fastk\n", "."),
])
def test_a_sibling_kernel_package_is_found_however_it_is_imported(code: str, module: str) -> None:
    files = {"qwen3_6_scripts/fastk/__init__.py": KERNELS}
    assert findings(RULE, code, files=files) == [
        *_defined("qwen3_6_scripts/fastk/__init__.py"),
        _imports(SHIPPED, 1, module, "qwen3_6_scripts/fastk/__init__.py"),
    ]


def test_a_relative_import_two_levels_up_is_found() -> None:
    code = "from ..fast_decode import decode\n"
    files = {"qwen3_6_scripts/fast_decode.py": KERNELS}
    assert findings(RULE, code, path="qwen3_6_scripts/qwen3_5/model.py", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports("qwen3_6_scripts/qwen3_5/model.py", 1, "..fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_relative_imports_of_a_module_in_a_subfolder_and_of_the_package_itself_are_found() -> None:
    files = {"qwen3_6_scripts/kern/fast.py": KERNELS, "qwen3_6_scripts/kern/__init__.py": "",
             "qwen3_6_scripts/kern/use.py": "from . import fast\nfrom .fast import decode\n"}
    found = findings(RULE, "from .kern.fast import decode\nfrom .kern import other\n", files=files)
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
    assert findings(RULE, "from .other import x\n", files=files) == _defined("qwen3_6_scripts/sub/fast_decode.py")


def test_an_import_of_the_package_that_holds_a_kernel_module_is_found() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp ./fast_decode.py {OPS}/fast_decode.py\n"
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert findings(RULE, "from vllm.attention.ops import fast_decode\n", files=files) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_one_import_of_two_kernel_modules_names_each() -> None:
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py\ncp ./fast_decode.py {OPS}/fast_decode.py\n"
              f"cp ./fast_prefill.py {OPS}/fast_prefill.py\n")
    files = {SCRIPT: script, "qwen3_6_scripts/fast_decode.py": KERNELS, "qwen3_6_scripts/fast_prefill.py": KERNELS}
    found = findings(RULE, "from vllm.attention.ops import fast_decode, fast_prefill\n", files=files)
    assert [f for f in found if f[0] == SHIPPED] == [
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_decode.py"),
        _imports(SHIPPED, 1, "vllm.attention.ops", "qwen3_6_scripts/fast_prefill.py"),
    ]


def test_an_import_the_file_rule_flags_does_not_hide_the_next_one() -> None:
    code = "from .paged_attention_v2_triton import decode_v2\nfrom .fast_decode import decode\n"
    files = {"qwen3_6_scripts/paged_attention_v2_triton.py": KERNELS, "qwen3_6_scripts/fast_decode.py": KERNELS}
    assert [f for f in findings(RULE, code, files=files) if f[0] == SHIPPED] == [
        (SHIPPED, 1, "error", "imports decode_v2 from .paged_attention_v2_triton"),
        _imports(SHIPPED, 2, ".fast_decode", "qwen3_6_scripts/fast_decode.py"),
    ]


def test_a_kernel_module_that_imports_itself_or_says_triton_is_reported_once() -> None:
    named = KERNELS + "\nfrom . import fast_decode_triton\n"
    files = {"qwen3_6_scripts/fast_decode_triton.py": named}
    found = findings(RULE, "from .fast_decode_triton import decode\n", files=files)
    # The file rule flags the import whose name says Triton; the tree rule adds nothing for it.
    assert [f for f in found if f[0] == SHIPPED] == [
        (SHIPPED, 1, "error", "imports decode from .fast_decode_triton"),
    ]
    assert [f for f in found if "which defines" in f[3]] == []


def test_an_import_of_a_kernel_module_that_cannot_run_is_a_note() -> None:
    code = "if False:\n    from .fast_decode import decode\n"
    assert findings(RULE, code, files={"qwen3_6_scripts/fast_decode.py": KERNELS}) == [
        *_defined("qwen3_6_scripts/fast_decode.py"),
        (SHIPPED, 2, "note", "imports .fast_decode (qwen3_6_scripts/fast_decode.py), which defines the Triton "
                             "kernels _qk_kernel, _pv_kernel, under `if False:`: cannot run: its test `False` is "
                             "always false"),
    ]


@pytest.mark.parametrize("broken", [
    "# notes on the triton port, half written\ndef decode(:\n",  # mentions triton: read for kernels
    "import pa_kernels\ndef decode(:\n",  # mentions the kernel module: read for imports
])
def test_a_shipped_file_that_does_not_parse_does_not_stop_the_reading_of_the_others(broken: str) -> None:
    files = {"qwen3_6_scripts/a_draft.py": broken, "qwen3_6_scripts/pa_kernels.py": KERNELS}
    assert [f for f in findings(RULE, "from .pa_kernels import decode\n", files=files) if f[0] == SHIPPED] == [
        _imports(SHIPPED, 1, ".pa_kernels", "qwen3_6_scripts/pa_kernels.py"),
    ]
