"""Rule no-triton-kernels on the switch: ``HAS_TRITON`` set true, in any spelling, turns the Triton prefill back on."""

from __future__ import annotations

from patcher.checks.no_triton_kernels import NoTritonKernels

from tests.fixtures_rules import errors_in

RULE = NoTritonKernels()


def test_the_switch_set_to_any_true_value_is_found_and_false_or_unset_is_not() -> None:
    code = """\
from vllm import triton_utils
HAS_TRITON = 1
triton_utils.HAS_TRITON = _ok = True
HAS_TRITON = False
HAS_TRITON = 0
HAS_TRITON = 'yes'
HAS_TRITON: bool
HAS_TRITON_V2 = True
"""
    assert errors_in(RULE, code) == [
        (2, "sets HAS_TRITON = True, which turns the Triton prefill path back on"),
        (3, "sets triton_utils.HAS_TRITON = True, which turns the Triton prefill path back on"),
    ]


def test_the_switch_set_under_a_guard_says_so() -> None:
    code = """\
import os
if os.environ.get('PA_TRITON') == '1':
    HAS_TRITON = True
"""
    assert errors_in(RULE, code) == [
        (3, "sets HAS_TRITON = True, which turns the Triton prefill path back on, "
            "under `if os.environ.get('PA_TRITON') == '1':`"),
    ]


def test_an_annotated_switch_set_false_is_fine() -> None:
    assert errors_in(RULE, "from vllm.triton_utils import HAS_TRITON\nHAS_TRITON: bool = False\n") == []
