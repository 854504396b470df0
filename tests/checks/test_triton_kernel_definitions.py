"""Rule no-triton-kernels on kernels the file defines: ``@triton.jit``/``autotune``/``heuristics`` under any alias,
a compile by call, and a launch ``kernel[grid](...)``; one finding per decorated kernel, however many decorators stack.

Decorators and calls named like Triton's but from another package
(``numba.jit``, ``torch.jit.script``, ``triton.testing``) define nothing.
"""

from __future__ import annotations

import pytest

from patcher.checks.no_triton_kernels import NoTritonKernels

from tests.fixtures_rules import HANG, errors_in, findings

RULE = NoTritonKernels()


def test_a_triton_compile_call_is_found_and_a_launch_through_a_class_attribute_is_not() -> None:
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
    assert errors_in(RULE, code) == [
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
    assert errors_in(RULE, code) == [
        (4, "defines the Triton kernel _decode (`@triton.jit`)"),
        (13, "launches the Triton kernel _decode (`self.ops._decode[(x.shape[0],)](...)`)"),
    ]


def test_a_subscript_call_of_something_else_is_no_launch() -> None:
    assert errors_in(RULE, "import triton\nhandlers = {}\nhandlers['decode'](q)\ncaches[0](q)\n") == []


def test_a_bare_autotune_from_triton_compiles_a_kernel() -> None:
    code = """\
from triton import autotune, Config
decode = autotune(configs=[Config({'BLOCK': 64})], key=['n'])(decode_body)
"""
    assert errors_in(RULE, code) == [
        (2, "compiles a Triton kernel (`autotune(configs=[Config({'BLOCK': 64})], key=['n'])`)"),
    ]


def test_a_decorator_from_another_package_named_jit_is_no_kernel() -> None:
    code = """\
import numba
import torch

@numba.jit
def a(x):
    return x

@torch.jit.script
def b(x):
    return x

@jit
def c(x):
    return x  # triton? no: an undefined name
"""
    assert errors_in(RULE, code) == []


def test_a_triton_decorator_that_is_not_a_kernel_decorator_is_no_kernel() -> None:
    assert errors_in(RULE, "import triton\n\n@triton.testing.perf_report\ndef bench(x):\n    pass\n") == []


def test_jit_imported_from_deep_in_triton_is_triton_s_jit() -> None:
    code = "from triton.runtime.jit import jit\n\n\n@jit\ndef _k(x):\n    pass\n"
    assert errors_in(RULE, code) == [(4, "defines the Triton kernel _k (`@jit`)")]


@pytest.mark.parametrize("binding, decorator", [
    ("tt = importlib.import_module('triton')", "tt.jit"),
    ("tt = __import__('triton')", "tt.autotune(configs=[], key=[])"),
    ("tt = __import__('triton.language')", "tt.jit"),  # __import__("a.b") returns the package a
    ("jit = importlib.import_module('triton').jit", "jit"),
])
def test_triton_imported_by_a_call_is_triton_under_the_name_it_is_bound_to(binding: str, decorator: str) -> None:
    code = f"import importlib\n{binding}\n\n\n@{decorator}\ndef _k(x):\n    pass\n"
    assert errors_in(RULE, code) == [(5, f"defines the Triton kernel _k (`@{decorator}`)")]


def test_a_kernel_defined_under_a_guard_and_called_without_a_grid_is_found_twice() -> None:
    code = """\
import triton
if HAS_TRITON:
    @triton.jit
    def _k(x):
        pass
def run(x):
    return _k(x)
"""
    assert errors_in(RULE, code) == [
        (3, "defines the Triton kernel _k (`@triton.jit`), under `if HAS_TRITON:`"),
        (7, "calls _k(...)"),
    ]


def test_async_kernels_are_found_too() -> None:
    code = "import triton\n\n\n@triton.jit\nasync def _k(x):\n    pass\n"
    assert errors_in(RULE, code) == [(4, "defines the Triton kernel _k (`@triton.jit`)")]


def test_a_second_decorator_of_the_same_kernel_is_one_finding() -> None:
    code = "import triton\n\n@triton.jit\n@triton.jit\ndef _k(x):\n    pass\n"
    assert errors_in(RULE, code) == [(3, "defines the Triton kernel _k (`@triton.jit`)")]


def test_an_autotuned_jit_kernel_is_defined_once_and_launched() -> None:
    code = """\
# Triton V2 decode, tried for 8K-100K tokens.
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=4)], key=['n'])
@triton.jit
def _decode_kernel(out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def decode(out, q):
    _decode_kernel[(q.shape[0],)](out, q, q.numel())
"""
    assert errors_in(RULE, code) == [
        (6, "defines the Triton kernel _decode_kernel "
            "(`@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=4)], key=['n'])`)"),
        (13, "launches the Triton kernel _decode_kernel (`_decode_kernel[(q.shape[0],)](...)`)"),
    ]


def test_an_autotune_without_jit_below_it_is_one_definition() -> None:
    code = "import triton\r\n\r\n@triton.autotune(configs=[], key=['n'])\r\ndef _k(x, n):\r\n    pass\r\n"
    assert errors_in(RULE, code) == [(3, "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`)")]


def test_a_stack_of_decorator_calls_through_aliases_is_one_definition() -> None:
    code = """\
from triton import autotune, heuristics, Config
import triton as tt


@heuristics({'EVEN_N': lambda args: args['n'] % 64 == 0})
@autotune(configs=[Config({'BLOCK': 64})], key=['n'])
@tt.jit
async def _k(x, n):
    pass
"""
    assert errors_in(RULE, code) == [
        (5, "defines the Triton kernel _k (`@heuristics({'EVEN_N': lambda args: args['n'] % 64 == 0})`)"),
    ]


def test_an_autotuned_kernel_under_try_is_one_definition_with_its_guard() -> None:
    code = """\
try:
    import triton

    @triton.autotune(configs=[], key=['n'])
    @triton.jit
    def _decode(x, n):
        pass
except ImportError:
    _decode = None
"""
    assert errors_in(RULE, code) == [
        (4, f"defines the Triton kernel _decode (`@triton.autotune(configs=[], key=['n'])`), "
            f"under `try:` ({HANG})"),
    ]


def test_an_autotuned_kernel_in_dead_code_is_one_note() -> None:
    code = "import triton\nif False:\n    @triton.autotune(configs=[], key=['n'])\n    def _k(x, n):\n        pass\n"
    assert findings(RULE, code) == [
        ("example.py", 3, "note", "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`), "
                                  "under `if False:`: cannot run: its test `False` is always false"),
    ]


def test_a_bare_autotune_call_beside_a_decorated_kernel_still_compiles() -> None:
    code = """\
import triton


@triton.autotune(configs=[], key=['n'])
def _k(x, n):
    pass


def _body(x, n):
    pass


decode = triton.autotune(configs=[], key=['n'])(_body)
"""
    assert errors_in(RULE, code) == [
        (4, "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`)"),
        (13, "compiles a Triton kernel (`triton.autotune(configs=[], key=['n'])`)"),
    ]


def test_a_kernel_compiled_inside_another_decorator_s_arguments_still_compiles() -> None:
    code = """\
import functools
import triton

@functools.lru_cache(triton.jit(_body))
def f(x):
    pass
"""
    assert errors_in(RULE, code) == [(4, "compiles a Triton kernel (`triton.jit(_body)`)")]


def test_a_non_triton_decorator_call_on_a_kernel_adds_nothing() -> None:
    code = """\
import functools
import triton

@functools.lru_cache(maxsize=None)
@triton.jit
def _k(x):
    pass
"""
    assert errors_in(RULE, code) == [(5, "defines the Triton kernel _k (`@triton.jit`)")]
