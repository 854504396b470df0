"""Every step, anchor and requires that finds nothing names the closest code, whenever its scope holds a statement.

A one-line function is a scope like any other; a compound statement is
compared header to header and block to block, and a header that differs is
named before anything inside it; reuse-buffers names the assignment that
came closest to a temporary's. Across edits of the vendor's own file (each
statement of the patched scopes emptied or renamed, built here), no failure
that found nothing leaves the closest code out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from patcher.patchset import load_patch_set
from patcher.patchset.runner import Status, patch_source
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE
from tests.transforms.conftest import closest_in, closest_summary


def test_a_one_line_function_names_its_statement() -> None:
    closest = closest_in("def forward_prefix(query, key): return _forward_prefix_triton(query, key)\n",
                         "return PagedAttention._forward_prefix_pytorch(query, key)", "forward_prefix")
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (1, 1, 1, 0)
    assert (closest.pattern, closest.code) == ("return PagedAttention._forward_prefix_pytorch(query, key)",
                                               "return _forward_prefix_triton(query, key)")


def test_a_one_line_branch_names_its_statement_among_indented_ones() -> None:
    closest = closest_in('''\
        def forward_decode(q, use_v1):
            x = prepare(q)
            if use_v1: out = ops.paged_attention_v1(q, 8)
            return out
        ''', "out = ops.paged_attention_v1(q, 16)", "forward_decode")
    assert closest_summary(closest) == (3, 3, 1, 0, "out = ops.paged_attention_v1(q, 16)",
                                        "out = ops.paged_attention_v1(q, 8)", "")


# Phase 1 and phase 2 of the vendor's prefill, phase 1's header without its step.
TWO_LOOPS = '''\
def _forward_prefix_pytorch(block_tables, i, q_len, num_ctx_blocks, tile_sz):
    for tile_blk in range(num_ctx_blocks):
        blk_end = min(tile_blk + 32, num_ctx_blocks)
        blk_ids = block_tables[i, tile_blk:blk_end]
        gather(blk_ids)
    for kc_start in range(0, q_len, tile_sz):
        kc_end = min(kc_start + tile_sz, q_len)
        causal(kc_start, kc_end)
'''
ANCHOR = "for tile_blk in range(0, num_ctx_blocks, $TILE):\n    $...\n    blk_ids = $TABLES[$SEQ, tile_blk:blk_end]\n    $...\n"


def test_a_loop_whose_header_lost_an_argument_is_closer_than_a_look_alike() -> None:
    # The second loop's header is as far from the pattern's, and holds none of its body.
    closest = closest_in(TWO_LOOPS, ANCHOR, "_forward_prefix_pytorch")
    assert closest_summary(closest) == (
        2, 5, 1, 0, "for tile_blk in range(0, num_ctx_blocks, $TILE): ...", "for tile_blk in range(num_ctx_blocks): ...", "")


@pytest.mark.parametrize(("pattern", "summary"), [
    pytest.param("if actual_max > 8192:\n    out = v1(q)\n",
                 (2, 3, 1, 0, "if actual_max > 8192: ...", "if actual_max > 16384: ...", ""),
                 id="a-header-that-differs-is-named-before-a-block-that-differs"),
    pytest.param("if actual_max > $LIMIT:\n    out = v1(q)\n",
                 (2, 3, 1, 0, "out = v1(q)", "out = v2(q)", "in its body, statement 1"),
                 id="a-header-a-metavariable-covers-agrees-and-the-block-is-named"),
])
def test_a_compound_statement_is_compared_header_first_then_block(pattern: str, summary: tuple[object, ...]) -> None:
    closest = closest_in('''\
        def forward_decode(q, actual_max):
            if actual_max > 16384:
                out = v2(q)
            return out
        ''', pattern, "forward_decode")
    assert closest_summary(closest) == summary


# --- through the runner, with the bundled series ---------------------------------------------------------


@pytest.fixture(scope="module")
def series():  # type: ignore[no-untyped-def]
    return load_patch_set(PATCHES).patches


VENDOR = (VENDOR_TREE / SHIPPED).read_text()


def _failures(series, source: str) -> list:  # type: ignore[no-untyped-def]
    result = patch_source(SHIPPED, source.encode(), series)
    assert result.parse_error is None
    return [o for o in result.outcomes if o.status is Status.FAILED]


@pytest.mark.parametrize("edit, code", [
    (lambda text: text.replace("m_blk", "m_block"), "m_block = s.amax(dim=-1)"),  # a temporary renamed
    (lambda text: text.replace("m_blk = s.amax(dim=-1)", "m_blk = torch.amax(s, dim=-1)"),
     "m_blk = torch.amax(s, dim=-1)"),  # its value spelt another way
])
def test_reuse_buffers_names_the_assignment_closest_to_a_temporary(series, edit, code: str) -> None:  # type: ignore[no-untyped-def]
    [failure] = _failures(series, edit(VENDOR))
    assert failure.patch.id == "prefix-buffer-reuse" and failure.diagnostic is not None
    assert failure.diagnostic.pattern == "m_blk = $S.amax(dim=-1)"
    closest = failure.diagnostic.closest
    assert closest is not None and (closest.pattern, closest.code) == ("m_blk = $S.amax(dim=-1)", code)
    assert VENDOR.splitlines()[closest.first_line - 1].strip().startswith("m_blk = s.amax(dim=-1)")


def _edits(source: str) -> list[tuple[str, str]]:
    """Each statement of the patched scopes emptied (`pass`), and each assignment's target renamed: (name, text)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    scopes = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
              and node.name in ("forward_decode", "_forward_prefix_pytorch")]
    edits = []
    for scope in scopes:
        for node in ast.walk(scope):
            if not isinstance(node, ast.stmt) or node is scope or node.end_lineno is None:
                continue
            first, last = node.lineno - 1, node.end_lineno
            indent = re.match(r"\s*", lines[first]).group()  # type: ignore[union-attr]
            emptied = "".join(lines[:first]) + f"{indent}pass\n" + "".join(lines[last:])
            edits.append((f"{scope.name}:{node.lineno}:pass", emptied))
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                renamed = lines[first].replace(name, name + "_x", 1)
                edits.append((f"{scope.name}:{node.lineno}:rename",
                               "".join(lines[:first]) + renamed + "".join(lines[first + 1:])))
    return edits


EDITS = _edits(VENDOR)
SAMPLE = EDITS[::max(1, len(EDITS) // 24)]  # two dozen edits spread over both scopes, the same ones every run


def test_the_edits_cover_both_scopes_and_both_kinds() -> None:
    names = [name for name, _ in SAMPLE]
    assert any(n.startswith("forward_decode:") for n in names) and any(n.startswith("_forward_prefix") for n in names)
    assert any(n.endswith(":pass") for n in names) and any(n.endswith(":rename") for n in names)


@pytest.mark.parametrize("name, source", SAMPLE, ids=[name for name, _ in SAMPLE])
def test_no_failure_that_found_nothing_leaves_the_closest_code_out(series, name: str, source: str) -> None:  # type: ignore[no-untyped-def]
    for failure in _failures(series, source):
        if "found it 0 times" in failure.detail or "which is not there" in failure.detail:
            assert failure.diagnostic is not None and failure.diagnostic.closest is not None, failure.message
            assert "closest: line" in failure.message
