"""Rules skip, before parsing, a file whose bytes hold none of their words: what that filter must still let through.

A file that holds any one of a rule's words is read; one that holds
non-ASCII bytes is always read (the word may be spelled in letters
Python folds to it, NFKC).
"""

from __future__ import annotations

import pytest

from patcher.checks import check_tree
from patcher.checks.base import PythonSource
from patcher.checks.examples import MemoryTree
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.checks.no_triton_kernels import NoTritonKernels
from patcher.shipping import plan_shipping

from tests.fixtures_rules import INSTALLS, POLICY, SCRIPT, errors_in, findings

RULE = NoTritonKernels()
INSTALL = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/paged_attn.py\n"


def _source(code: str) -> PythonSource:
    return PythonSource("qwen3_6_scripts/paged_attn.py", code.encode())


def test_mentions_looks_at_bytes_and_trusts_no_non_ascii_file() -> None:
    assert _source("ops.paged_attention_v2(o)\n").mentions("paged_attention_v1", "paged_attention_v2")
    assert not _source("ops.paged_attention_v1(o)\n").mentions("paged_attention_v2")
    assert _source("# café\nx = 1\n").mentions("paged_attention_v2")  # could be spelled in NFKC letters


def test_a_file_without_any_of_the_words_is_not_read() -> None:
    # It would not even parse: the pre-filter never gets that far.
    assert errors_in(RULE, "def f(:\n    return prefill(q)\n") == []


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
    assert errors_in(RULE, code) == [finding]


def test_a_script_that_only_mentions_triton_in_capitals_is_still_read() -> None:
    script = "set -e\n# TRITON build for the other card family\nWHL=./Triton-2.1.0-cp310-linux_x86_64.whl\n" \
             "pip install $WHL\n"
    assert findings(RULE, script, path=SCRIPT) == [
        (SCRIPT, 4, "error", f"installs Triton (`./Triton-2.1.0-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


@pytest.mark.parametrize("kernels", [
    "import triton\n\n@triton.jit\ndef _fwd_kernel(x):\n    pass\n",
    # Spelled in full-width letters that Python folds to `triton`: the bytes never hold the word.
    "# Kernels (résumé of the vendor's notes)\nimport \uff54riton\n\n@\uff54riton.jit\ndef _fwd_kernel(x):\n    pass\n",
])
def test_a_tree_rule_reads_every_file_that_can_hold_its_word(kernels: str) -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL, "qwen3_6_scripts/kernels.py": kernels,
                       EXAMPLE_TARGET: "from kernels import _fwd_kernel\n"}, executable=[EXAMPLE_SCRIPT])
    result = check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    imports = [(v.path, v.line, v.message) for v in result.violations if v.path == EXAMPLE_TARGET]
    assert imports == [(EXAMPLE_TARGET, 1, "imports kernels (qwen3_6_scripts/kernels.py), "
                                           "which defines the Triton kernel _fwd_kernel")]
