"""Every version of a patched file is the code libcst generates, byte for byte; only what changed is generated again.

License headers, comments after the last statement, a missing final
newline, one-line definitions, ``match`` statements, CRLF and tabs all
survive; a patch to one method generates that statement again, not its
class.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import pytest

from patcher.patchset.runner import Status, _Codegen, patch_source, run_patch

from tests.fixtures_patches import insert_step, patch_toml, replace_step
from tests.patchset.conftest import SOURCE, run_one


# File shapes that libcst's code generation could get wrong: a replace of one line must leave every other byte as it was.
@pytest.mark.parametrize(("patch_id", "source", "pattern", "code", "scope"), [
    pytest.param("edit", b"# Copyright (c) vendor. All rights reserved.\n# SPDX-License-Identifier: Apache-2.0\n\n"
                 + SOURCE.rstrip(b"\n"), "y = 2", "y = 3", "f",
                 id="a-license-header-and-a-file-without-a-final-newline-are-kept"),
    pytest.param("tune", SOURCE + b"\n\n# end of paged_attn.py\n# vim: set ts=4 sw=4 et:\n", "y = 2", "y = 3", "f",
                 id="a-comment-after-the-last-statement-is-kept"),
    pytest.param("shift", (b"class KernelError(RuntimeError): pass\n"
                           b"def ident(x): return x\n"
                           b"class Ops:\n"
                           b"    def scale(self, x): return x * 2\n"
                           b"    def shift(self, x):\n"
                           b"        return x + 1\n"), "return x + 1", "return x + 2", "Ops.shift",
                 id="one-line-definitions-are-generated-as-written"),
    pytest.param("scale", (b"def dispatch(kind, x):\n"
                           b"    scale = 1\n"
                           b"    match kind:\n"
                           b"        case \"fp16\":\n"
                           b"            return x.half() * scale\n"
                           b"        case _:\n"
                           b"            return x * scale\n"), "scale = 1", "scale = 2", "dispatch",
                 id="a-function-holding-a-match-statement-is-generated-again"),
])
def test_a_patched_file_is_the_source_with_only_the_replaced_line_rewritten(
        load_patch: Any, patch_id: str, source: bytes, pattern: str, code: str, scope: str) -> None:
    result, outcome = run_one(load_patch, patch_toml(patch_id, replace_step(pattern, code), scope=scope), source)
    assert outcome.status is Status.APPLIED
    assert result.patched == source.replace(pattern.encode(), code.encode())


def test_a_patch_that_empties_a_module_leaves_its_newline(load_patch: Any) -> None:
    # The vendor __init__.py re-exports a module the patched build drops.
    source = b"from .fused_moe import *\n"
    result = patch_source("__init__.py", source, [load_patch(patch_toml("drop", replace_step("from .fused_moe import *", ""),
                                                                        scope=""))])
    assert result.outcomes[0].status is Status.APPLIED
    assert result.patched == b"\n"


CLASS = '''\
# Copyright (c) vendor.
"""Paged attention, the vendor's way."""
import torch


class PagedAttention:
    """Decode with a paged KV cache."""

    def forward_prefix(self, q, k, v):
        scale = q.shape[-1] ** -0.5
        out = torch.empty_like(q)
        return out * scale

    def forward_decode(self, q, k, v):
        scale = q.shape[-1] ** -0.5
        tile = 64
        for start in range(0, k.shape[0], tile):
            out = q @ k[start:start + tile].T
        return out * scale


if __name__ == "__main__":
    print(PagedAttention())
'''


def _count_statement_codegen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the code of every simple statement libcst generates from its node."""
    generated: list[str] = []
    original = cst.SimpleStatementLine._codegen_impl

    def counting(self: cst.SimpleStatementLine, state: Any, *args: Any, **kwargs: Any) -> None:
        generated.append(cst.Module([]).code_for_node(self.body[0]))
        original(self, state, *args, **kwargs)

    monkeypatch.setattr(cst.SimpleStatementLine, "_codegen_impl", counting)
    return generated


def test_a_patch_to_one_method_generates_only_that_statement_again(
    load_patch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = cst.parse_module(CLASS)
    patch = load_patch(patch_toml("tile", replace_step("tile = 64", "tile = 128"), scope="PagedAttention.forward_decode"))
    patch.steps  # build the patch now: building generates code of its own
    codegen = _Codegen()
    generated = _count_statement_codegen(monkeypatch)
    assert codegen.code(module) == CLASS
    assert len(generated) == 11  # every simple statement once
    generated.clear()
    assert codegen.code(module) == CLASS
    assert generated == []  # nothing changed: every statement replayed
    patched, outcome = run_patch(patch, module)
    assert outcome.status is Status.APPLIED
    generated.clear()
    code = codegen.code(patched)
    assert generated == ["tile = 128"]  # not the class, nor the rest of its method
    assert code == CLASS.replace("tile = 64", "tile = 128") == patched.code


def test_every_version_of_a_module_is_generated_as_libcst_generates_it(load_patch: Any) -> None:
    source = CLASS.replace("\n", "\r\n").replace("    ", "\t").encode()
    patches = [
        load_patch(patch_toml("tile", replace_step("tile = 64", "tile = 128"), scope="PagedAttention.forward_decode")),
        load_patch(patch_toml("pre", insert_step("after", "out = torch.empty_like(q)", "out.zero_()"),
                              scope="PagedAttention.forward_prefix")),
        load_patch(patch_toml("main", replace_step("print(PagedAttention())", "print(PagedAttention(), flush=True)"), scope="")),
    ]
    result = patch_source("x.py", source, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3
    assert result.patched == (source.replace(b"tile = 64", b"tile = 128")
                              .replace(b"out = torch.empty_like(q)\r\n", b"out = torch.empty_like(q)\r\n\t\tout.zero_()\r\n")
                              .replace(b"PagedAttention())", b"PagedAttention(), flush=True)"))
