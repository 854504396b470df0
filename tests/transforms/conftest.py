"""Vendor-shaped sources the transforms' tests search, and helpers to read what a search found."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.records import Closest
from patcher.transforms.closest import find_closest
from patcher.transforms.pattern import Pattern
from patcher.transforms.scope import find_scope

# The body of the vendor's forward_decode as a method: the V1/V2 dispatch.
DISPATCH = '''\
        use_v1 = max_seq_len <= 8192
        if use_v1:
            out = ops.paged_attention_v1(query, key_cache)
        else:
            out = ops.paged_attention_v2(query, key_cache)
        return out
'''

# A vendor-shaped module: a class with the two forwards, helpers, a guarded
# import, a nested function and a method inside an if block of the class.
PAGED_ATTENTION = '''\
"""Paged attention for the BI-V100."""
from typing import TYPE_CHECKING

try:
    from vllm import _custom_ops as ops
except ImportError:  # CPU-only test runs
    ops = None

if TYPE_CHECKING:
    def _typing_only() -> None: ...

_PARTITION_SIZE = 512


class PagedAttention:
    """Decode and prefill."""

    @staticmethod
    def forward_decode(query, key_cache, value_cache, max_seq_len):
        # V1 up to 8192 tokens
''' + DISPATCH + '''
    @staticmethod
    def forward_prefix(query, key, value):
        def _tile(start):
            return query[start:start + 64]
        scale = query.shape[-1] ** -0.5
        return _tile(0) * scale

    if TYPE_CHECKING:
        def debug_dump(self) -> None: ...


def _pytorch_decode(query, key_cache):
    return query @ key_cache
'''


@pytest.fixture(scope="module")
def module() -> cst.Module:
    """The parsed PAGED_ATTENTION (one parse for a test module: searches never change a tree)."""
    return cst.parse_module(PAGED_ATTENTION)


# forward_decode as the vendor writes it: a swap, the V1/V2 dispatch, a synchronize.
FORWARD_DECODE = '''\
def forward_decode(query, key_cache, value_cache, max_seq_len):
    """Decode one token per sequence."""
    key_cache, value_cache = value_cache, key_cache  # the vendor swapped them
    output = torch.empty_like(query)
    use_v1 = max_seq_len <= 8192

    # V1 for short contexts, V2 above.
    if use_v1:
        ops.paged_attention_v1(output, query, key_cache, value_cache)
    else:
        ops.paged_attention_v2(output, query, key_cache, value_cache)
    torch.cuda.synchronize()
    return output
'''


# The vendor's V2 path: three statements and a comment.
V2_DECODE = textwrap.dedent('''\
    def forward_decode(query, key_cache, block_tables):
        # the vendor's v2 path, three statements
        output = torch.empty_like(query)
        ops.paged_attention_v2(output, query, key_cache, block_tables)
        return output
    ''')


# A class whose decode dispatches to V1 or V2, for the lines of the file as read.
DECODE = '''\
_PARTITION_SIZE = 512


class PagedAttention:
    @staticmethod
    def forward_decode(query, key_cache, max_seq_len):
''' + DISPATCH


def code_of(module: cst.Module, node: object) -> str:
    """Return the code of NODE in MODULE, or of a tuple of nodes (what a `$...X` binds) one after the other."""
    if isinstance(node, tuple):
        return "".join(module.code_for_node(n) for n in node)
    return module.code_for_node(node)  # type: ignore[arg-type]


def closest_in(code: str, pattern: str, scope: str) -> Closest | None:
    """Return the closest code to PATTERN in SCOPE of CODE (both dedented)."""
    module = cst.parse_module(textwrap.dedent(code))
    return find_closest(Pattern.parse(textwrap.dedent(pattern)), module, find_scope(module, scope))


def closest_summary(closest: Closest | None) -> tuple[object, ...]:
    """Return what a report shows of CLOSEST: its lines, the statement that differs, how many matched, both texts, where."""
    assert closest is not None
    return (closest.first_line, closest.last_line, closest.statement, closest.matched,
            closest.pattern, closest.code, closest.inside)


@pytest.fixture
def apply_steps(run_steps):  # type: ignore[no-untyped-def]
    """Run STEPS on SOURCE as ``run_steps`` does, check that the patch applied, and return the patched text."""
    def apply(steps: str, source: str, scope: str = "") -> str:
        patched, outcome = run_steps(steps, source, scope)
        assert outcome.status is Status.APPLIED, outcome.detail
        return patched  # type: ignore[no-any-return]

    return apply
