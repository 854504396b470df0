"""Whether the vendor changed a scope a patch relies on, judged on syntax, and that scope's diff alone.

A function scope is its whole definition, decorators included; a class or
the module is its own statements, its methods by signature only (each method
is a scope of its own); definitions under ``if``/``try`` count, a nested
function's insides do not. Comments, blank lines and CRLF are no change; a
file that does not parse, or a scope missing on one side, is said so. Each
(file pair, scope) is judged once and its diff numbered once.
"""

from __future__ import annotations

from pathlib import Path

from patcher.patchset.outcome import FileOutcome
from patcher.review.upgrade import ScopeChange, _ScopeDiffs, patch_scopes, scope_change

from tests.fixtures_cli import TARGET
from tests.fixtures_patches import patch_toml, step
from tests.fixtures_vendor import SHIPPED

MARKERS = """
applied-when = [{ scope = "PagedAttention.swap_blocks", pattern = "return y" }]
requires = [{ scope = "PagedAttention", pattern = "_PARTITION_SIZE = 512" },
            { scope = "PagedAttention.forward_prefix", pattern = "return x" }, "a = 2"]
"""

VENDOR = '''\
import torch


class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
        use_v1 = True
        return query

    def one_line(self): return 1

    try:
        from vllm import _custom_ops as ops
    except ImportError:
        def _fallback(x):
            def inner(y):
                return y
            return x
    else:
        if ops:
            class Inner:
                def deep(self):
                    return 2
    finally:
        pass
'''


def outcome(text: str | bytes, path: str = SHIPPED) -> FileOutcome:
    data = text.encode() if isinstance(text, str) else text
    return FileOutcome(path, data, data, ())


def change(scope: str, new: str | bytes, old: str | bytes = VENDOR) -> ScopeChange:
    return scope_change(scope, outcome(old), outcome(new))


def test_comments_blank_lines_crlf_and_a_bom_are_no_change() -> None:
    reformatted = ("\ufeff" + VENDOR.replace("        use_v1 = True\n", "        # forced: no V2 kernel\n\n"
                                             "        use_v1 = (\n            True\n        )\n")).replace("\n", "\r\n")
    for scope in ("", "PagedAttention", "PagedAttention.forward_decode", "PagedAttention._fallback"):
        assert change(scope, reformatted) == ScopeChange(scope, False, ""), scope


def test_a_changed_function_is_diffed_alone_in_the_file_s_own_numbers() -> None:
    new = "# a new header line\n" + VENDOR.replace("        use_v1 = True\n", "        use_v1 = actual_max <= 8192\n")
    assert change("PagedAttention.forward_decode", new) == ScopeChange(
        "PagedAttention.forward_decode", True,
        f"--- a/{SHIPPED} (PagedAttention.forward_decode)\n+++ b/{SHIPPED} (PagedAttention.forward_decode)\n"
        "@@ -7,5 +8,5 @@\n     @staticmethod\n     def forward_decode(query, seq_lens):\n"
        "         actual_max = int(seq_lens.max().item())\n-        use_v1 = True\n+        use_v1 = actual_max <= 8192\n"
        "         return query\n")


def test_a_changed_decorator_is_a_change_of_the_function_and_shown() -> None:
    new = VENDOR.replace("    @staticmethod\n    def forward_decode", "    @classmethod\n    def forward_decode")
    found = change("PagedAttention.forward_decode", new)
    assert found.changed and "-    @staticmethod\n+    @classmethod\n" in found.diff
    assert found.diff.splitlines()[2] == "@@ -7,4 +7,4 @@"  # the decorator's line opens the scope


def test_a_class_is_its_own_statements_and_its_methods_signatures() -> None:
    body_only = VENDOR.replace("        return query\n", "        return query * 2\n")
    assert not change("PagedAttention", body_only).changed  # a method's body is that method's scope
    assert change("PagedAttention.forward_decode", body_only).changed
    attribute = VENDOR.replace("_PYTORCH_DECODE_THRESHOLD = 32768", "_PYTORCH_DECODE_THRESHOLD = 65536")
    found = change("PagedAttention", attribute)
    assert found.diff == (f"--- a/{SHIPPED} (PagedAttention)\n+++ b/{SHIPPED} (PagedAttention)\n"
                          "@@ -4,5 +4,5 @@\n class PagedAttention:\n-    _PYTORCH_DECODE_THRESHOLD = 32768\n"
                          "+    _PYTORCH_DECODE_THRESHOLD = 65536\n \n     @staticmethod\n"
                          "     def forward_decode(query, seq_lens):\n")
    signature = VENDOR.replace("def forward_decode(query, seq_lens):", "def forward_decode(query, seq_lens, k_scale):")
    assert change("PagedAttention", signature).changed
    one_line = VENDOR.replace("def one_line(self): return 1", "def one_line(self): return 2")
    # A one-line def keeps its line in the class's text, but only its signature counts.
    assert not change("PagedAttention", one_line).changed
    assert change("PagedAttention.one_line", one_line).changed


def test_a_module_scope_diff_skips_function_bodies_and_is_labelled_module() -> None:
    new = VENDOR.replace("import torch\n", "import torch\nimport os\n").replace("        return query\n",
                                                                              "        return query + 1\n")
    found = change("", new)
    assert found.diff == (f"--- a/{SHIPPED} ((module))\n+++ b/{SHIPPED} ((module))\n"
                          "@@ -1,4 +1,5 @@\n import torch\n+import os\n \n \n class PagedAttention:\n")


def test_definitions_under_try_except_else_and_if_are_found_but_not_inside_functions() -> None:
    deep = VENDOR.replace("return 2", "return 3")
    assert change("PagedAttention.Inner.deep", deep).changed
    assert not change("PagedAttention.Inner", deep).changed
    fallback = VENDOR.replace("            return x\n", "            return -x\n")
    assert change("PagedAttention._fallback", fallback).changed
    # 'inner' lives inside _fallback's body: no scope of that name.
    assert change("PagedAttention.inner", fallback) == ScopeChange("PagedAttention.inner", False, "",
                                                                   "missing in OLD and NEW")
    # A dotted path names a nested function, though: its own body did not change.
    assert change("PagedAttention._fallback.inner", fallback) == ScopeChange("PagedAttention._fallback.inner", False, "")
    assert change("forward_decode", VENDOR).note == "missing in OLD and NEW"  # methods are not module functions


def test_a_scope_missing_on_one_side_is_changed_and_diffed_whole() -> None:
    without = VENDOR.replace("    def one_line(self): return 1\n", "")
    assert change("PagedAttention.one_line", without) == ScopeChange(
        "PagedAttention.one_line", True,
        f"--- a/{SHIPPED} (PagedAttention.one_line)\n+++ b/{SHIPPED} (PagedAttention.one_line)\n"
        "@@ -13 +0,0 @@\n-    def one_line(self): return 1\n", "missing in NEW")
    gained = change("PagedAttention.one_line", VENDOR, old=without)
    assert (gained.changed, gained.note) == (True, "missing in OLD")
    assert gained.diff.splitlines()[2:] == ["@@ -0,0 +13 @@", "+    def one_line(self): return 1"]


def test_a_file_that_does_not_parse_makes_every_scope_changed_and_says_which() -> None:
    assert change("PagedAttention", "def broken(:\n") == ScopeChange("PagedAttention", True, "", "NEW does not parse")
    assert change("PagedAttention", VENDOR, old=b"\xff\xfe not utf-8").note == "OLD does not parse"
    assert change("PagedAttention", "x = '\0'\0\n", old="def (\n").note == "OLD and NEW do not parse"


def test_each_scope_is_judged_once_and_changed_ones_numbered_in_the_order_met() -> None:
    old, new = outcome(VENDOR), outcome(VENDOR.replace("return query", "return query + 1")
                                        .replace("return 1", "return 2"), "qwen3_6_scripts/paged_attn_bi100.py")
    diffs = _ScopeDiffs()
    first = diffs.get("PagedAttention.forward_decode", old, new)
    calm = diffs.get("PagedAttention", old, new)
    second = diffs.get("PagedAttention.one_line", old, new)
    assert (first.number, calm.number, second.number) == (1, 0, 2)
    assert first.path == second.path == calm.path == "qwen3_6_scripts/paged_attn_bi100.py"
    assert diffs.get("PagedAttention.forward_decode", old, new) is first
    assert diffs.get("PagedAttention.forward_decode", old, outcome(VENDOR.replace("return query", "return 0"))).number == 3


def test_a_scope_a_drop_does_not_ship_is_not_compared() -> None:
    diffs, shipped = _ScopeDiffs(), outcome(VENDOR)
    assert diffs.get("PagedAttention", None, shipped) == ScopeChange("PagedAttention", None, "",
                                                                     "OLD does not ship the target", SHIPPED)
    assert diffs.get("PagedAttention", shipped, None) == ScopeChange("PagedAttention", None, "",
                                                                     "NEW does not ship the target", SHIPPED)
    assert diffs.get("PagedAttention", None, None) == ScopeChange("PagedAttention", None, "",
                                                                  "OLD and NEW do not ship the target", "")


def test_a_patch_relies_on_its_scope_its_steps_scopes_its_markers_and_requires_each_once(bundled, load_patch) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = bundled.patches
    assert patch_scopes(decode) == ("PagedAttention.forward_decode", "PagedAttention")
    assert patch_scopes(gather) == ("PagedAttention._forward_prefix_pytorch",)
    patch = load_patch(patch_toml("scoped", step("replace", scope="PagedAttention.forward_prefix", pattern="return x",
                                                  code="return y") + step("replace", pattern="a = 1", code="a = 2"),
                                  scope="PagedAttention.forward_decode", target=TARGET, header=MARKERS))
    assert patch_scopes(patch) == ("PagedAttention.forward_decode", "PagedAttention.forward_prefix",
                                   "PagedAttention.swap_blocks", "PagedAttention")


def test_the_scope_cache_does_not_confuse_two_files() -> None:
    # Two patches' files in one run: each parsed text answers for itself.
    other = VENDOR.replace("32768", "65536")
    assert not scope_change("PagedAttention", outcome(VENDOR), outcome(VENDOR)).changed
    assert scope_change("PagedAttention", outcome(VENDOR), outcome(other)).changed
    assert not scope_change("PagedAttention", outcome(other), outcome(other)).changed
    assert Path(SHIPPED).suffix == ".py"


def test_a_crlf_file_s_scope_diff_has_plain_line_ends() -> None:
    old = VENDOR.replace("\n", "\r\n")
    found = change("PagedAttention.forward_decode", old.replace("return query", "return query * 2"), old=old)
    assert found.changed and "\r" not in found.diff
    assert "-        return query\n+        return query * 2\n" in found.diff


def test_a_one_line_method_keeps_its_line_in_its_class_s_diff() -> None:
    old = "class Cache:\n    def size(self): return 1\n    BLOCK = 16\n"
    found = change("Cache", old.replace("BLOCK = 16", "BLOCK = 32"), old=old)
    assert found.diff.splitlines()[2:] == ["@@ -1,3 +1,3 @@", " class Cache:", "     def size(self): return 1",
                                           "-    BLOCK = 16", "+    BLOCK = 32"]


NESTED = '''\
class PagedAttention:
    try:
        import triton
    finally:
        def _closing(self):
            return 0
    if triton:
        pass
    else:
        def _no_triton(self):
            return 1
    with open("x") as handle:
        def _in_with(self):
            return 2
'''


def test_definitions_under_finally_an_if_s_else_and_a_with_are_scopes() -> None:
    for scope, old, new in (("PagedAttention._closing", "return 0", "return 10"),
                            ("PagedAttention._no_triton", "return 1", "return 11"),
                            ("PagedAttention._in_with", "return 2", "return 12")):
        found = change(scope, NESTED.replace(old, new), old=NESTED)
        assert (found.changed, found.note) == (True, ""), scope
        assert f"-            {old}\n+            {new}\n" in found.diff
