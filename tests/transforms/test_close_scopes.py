"""Scopes with close names: every class and function by its qualified name, the nearest offered first.

A renamed method is still found by its own name when its class was
renamed past recognition; names too far from the one asked are not offered.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.transforms.closest import close_scopes, qualified_names


def test_qualified_names_in_source_order_with_nesting(module: cst.Module) -> None:
    # Functions under if/try blocks count; the nested def is named under its function.
    assert list(qualified_names(module)) == [
        "_typing_only",
        "PagedAttention",
        "PagedAttention.forward_decode",
        "PagedAttention.forward_prefix",
        "PagedAttention.forward_prefix._tile",
        "PagedAttention.debug_dump",
        "_pytorch_decode",
    ]


def test_qualified_names_with_a_prefix_and_none_inside_expressions() -> None:
    tree = cst.parse_module("handlers = [lambda: 1]\nclass A:\n    x = (lambda y: y)\n    def f(self): pass\n")
    assert list(qualified_names(tree, "mod.")) == ["mod.A", "mod.A.f"]


@pytest.mark.parametrize(("asked", "expected"), [
    ("PagedAttention.forward_decod", ("PagedAttention.forward_decode", "PagedAttention.forward_prefix",
                                      "PagedAttention.forward_prefix._tile")),
    ("PagedAttention.forward_prefx", ("PagedAttention.forward_prefix", "PagedAttention.forward_prefix._tile",
                                      "PagedAttention.forward_decode")),
    ("_pytorch_decod", ("_pytorch_decode",)),
    # The class was renamed past recognition: the method's own name still finds it.
    ("Qwertyuiopasdfghjklzxcvbnm.debug_dumb", ("PagedAttention.debug_dump",)),
    ("Zz.Yy.Xx.Ww.Vv.Uu.Tt._tile", ("PagedAttention.forward_prefix._tile",)),
    ("zzz", ()),
])
def test_close_scopes_names_the_nearest_ones(module: cst.Module, asked: str, expected: tuple[str, ...]) -> None:
    assert close_scopes(module, asked) == expected


def test_close_scopes_stops_at_its_limit(module: cst.Module) -> None:
    assert close_scopes(module, "PagedAttention.forward", limit=1) == ("PagedAttention.forward_prefix",)
    assert close_scopes(module, "PagedAttention.forward") == (
        "PagedAttention.forward_prefix", "PagedAttention.forward_decode", "PagedAttention")
    assert close_scopes(module, "Qwertyuiopasdfghjklzxcvbnm.forward_prefx", limit=1) == (
        "PagedAttention.forward_prefix",)


NAMES = '''\
class PagedAttention:
    def forward_decode(self): ...
    def forward_prefix(self): ...
    def _forward_decode_pytorch(self): ...
    def _forward_prefix_pytorch(self): ...


def swap_blocks(): ...
'''


@pytest.mark.parametrize(("asked", "limit", "expected"), [
    # Names similar at 0.596 and 0.545 of the whole are still offered.
    ("Attention.decode_v2", 3, ("PagedAttention.forward_decode", "PagedAttention._forward_decode_pytorch",
                                "PagedAttention")),
    # The class renamed past recognition: methods by their own names (0.727,
    # then 0.516 for the PyTorch fallbacks), as many as asked.
    ("zzzzzzzzzzzzzzzzzzzzzzzzzzzz.forward_", 1, ("PagedAttention.forward_prefix",)),
    ("zzzzzzzzzzzzzzzzzzzzzzzzzzzz.forward_", 4, ("PagedAttention.forward_prefix", "PagedAttention.forward_decode",
                                                  "PagedAttention._forward_prefix_pytorch",
                                                  "PagedAttention._forward_decode_pytorch")),
])
def test_close_scopes_offers_names_above_its_cutoff_up_to_its_limit(asked: str, limit: int, expected: tuple[str, ...]) -> None:
    assert close_scopes(cst.parse_module(NAMES), asked, limit=limit) == expected
