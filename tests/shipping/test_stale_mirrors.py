"""A shipped file's stale mirror is the root-level file of the same name; CRLF against LF alone is told apart.

VENDOR.md: the root ``paged_attn.py`` looks like the shipped
``qwen3_6_scripts/paged_attn.py`` but never reaches the image.
"""

from __future__ import annotations

import pytest

from patcher.shipping import MirrorGroup, find_mirrors, line_endings_only
from tests.shipping.conftest import MemoryTree

TREE = MemoryTree({"paged_attn.py": "", "qwen3_6_scripts/paged_attn.py": "", "qwen3_6_scripts/sequence.py": "",
                   "vllm/sequence.py": ""})


@pytest.mark.parametrize(("shipped", "mirrors"), [
    ("qwen3_6_scripts/paged_attn.py", ("paged_attn.py",)),
    ("qwen3_6_scripts/sequence.py", ()),  # no root copy (vllm/sequence.py is not at the root)
    ("paged_attn.py", ()),  # the root file is not its own mirror
])
def test_the_mirror_is_the_root_file_of_the_same_name(shipped: str, mirrors: tuple[str, ...]) -> None:
    group = find_mirrors(TREE, shipped)
    assert group == MirrorGroup(shipped, mirrors) and group.paths == (shipped, *mirrors)


@pytest.mark.parametrize(("a", "b", "only"), [
    (b"a\r\nb\r\n", b"a\nb\n", True),
    (b"a\nb\n", b"a\r\nb", False),
    (b"a\r\nb\r\n", b"a\r\nb\r\n", False),  # equal: no difference at all
    (b"a\r\nb\n", b"a\nb\r\n", True),
    (b"a\rb\n", b"a\nb\n", False),  # a lone CR is not a line ending here
    (b"a\r\nc\r\n", b"a\nb\n", False),
])
def test_line_endings_only_tells_crlf_from_lf_apart_from_a_real_change(a: bytes, b: bytes, only: bool) -> None:
    assert line_endings_only(a, b) is only and line_endings_only(b, a) is only
