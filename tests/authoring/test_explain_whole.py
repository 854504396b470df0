"""``patcher explain`` of a patch that uses every part: what it prints, line for line, and where it matches in a drop.

The patch has a multi-paragraph description, markers in its own scope and
in the class, a requirement, parameters with a lower bound only, an upper
bound only and none (one with help), a replace, an insert after and an
insert before (expected twice), a step in another scope and one in a scope
the file lacks. In the drop it runs after a patch that inserts a guard
below ``actual_max``: matches in the vendor's code are shown at the shipped
file's lines, a match that starts in vendor code and ends in the guard
says so from its first line, one inside the guard says an earlier patch
wrote it, captures of arguments are joined and captured statements
indented, and the step whose scope is missing is named.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from tests.authoring.conftest import shipped_source
from tests.fixtures_patches import insert_step, patch_toml, write_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

GUARD = patch_toml("decode-guard", insert_step("after", "actual_max = $_", """
    if query.shape[0] == 0:
        return torch.empty_like(query)
"""), scope="PagedAttention.forward_decode", target="vllm/attention/ops/paged_attn.py",
                   header='applied-when = ["return torch.empty_like(query)"]',
                   description="Return at once on an empty batch", last_update="2026-12-01")

EXPLAINED = '''\
id = "decode-v1-limit"
description = """Use V1 up to small_max tokens

The vendor forces V1 for every decode.


It keeps the heuristic."""
origin = "test"
last-update = "2026-12-01"
target = "vllm/attention/ops/paged_attn.py"
scope = "PagedAttention.forward_decode"
applied-when = ["use_v1 = actual_max <= {{ small_max }}", { scope = "PagedAttention", pattern = "_PYTORCH_DECODE_THRESHOLD = $_" }]
requires = ["actual_max = $_"]

[params.small_max]
type = "int"
default = 8192
min = 1
help = "Longest sequence, in tokens, that decodes with V1."

[params.tiles]
type = "int"
default = 32
max = 64

[params.label]
type = "str"
default = "v1"

[[steps]]
op = "replace"
pattern = "use_v1 = True"
code = "use_v1 = actual_max <= {{ small_max }}"

[[steps]]
op = "insert"
after = """
if use_v1:
    ops.paged_attention_v1($...V1_ARGS)
else:
    $...V2
"""
code = "assert output.shape == query.shape"

[[steps]]
op = "replace"
scope = "PagedAttention._forward_prefix_pytorch"
pattern = "_BLOCKS_PER_TILE = $N"
code = "_BLOCKS_PER_TILE = {{ tiles }}"

[[steps]]
op = "insert"
after = """
actual_max = $_
if query.shape[0] == 0:
    $...
"""
code = "pass"

[[steps]]
op = "insert"
before = """
if query.shape[0] == 0:
    $...
"""
code = "pass"
expect = 2

[[steps]]
op = "replace"
scope = "PagedAttention.forward_v3"
pattern = "x = 1"
code = "x = 2"
'''

WORDS = """\

Use V1 up to small_max tokens

The vendor forces V1 for every decode.

It keeps the heuristic.

Patch: decode-v1-limit
Origin: test
Last-Update: 2026-12-01

Target: vllm/attention/ops/paged_attn.py
Scope: PagedAttention.forward_decode
Applied when: 'use_v1 = actual_max <= {small_max}'
Applied when: '_PYTORCH_DECODE_THRESHOLD = $_' (in PagedAttention)
Requires: 'actual_max = $_'

Parameters:
  small_max (int, min 1) = {small_max}{set}; default 8192
      Longest sequence, in tokens, that decodes with V1.
  tiles (int, max 64) = 32; default 32
  label (str) = 'v1'; default 'v1'

Steps:
  1. replace, in PagedAttention.forward_decode, each run of statements matching (expected once):
         use_v1 = True
     with:
         use_v1 = actual_max <= {small_max}
  2. insert, in PagedAttention.forward_decode, after each run of statements matching the anchor (expected once):
         if use_v1:
             ops.paged_attention_v1($...V1_ARGS)
         else:
             $...V2
     the code:
         assert output.shape == query.shape
  3. replace, in PagedAttention._forward_prefix_pytorch, each run of statements matching (expected once):
         _BLOCKS_PER_TILE = $N
     with:
         _BLOCKS_PER_TILE = 32
  4. insert, in PagedAttention.forward_decode, after each run of statements matching the anchor (expected once):
         actual_max = $_
         if query.shape[0] == 0:
             $...
     the code:
         pass
  5. insert, in PagedAttention.forward_decode, before each run of statements matching the anchor (expected 2 times):
         if query.shape[0] == 0:
             $...
     the code:
         pass
  6. replace, in PagedAttention.forward_v3, each run of statements matching (expected once):
         x = 1
     with:
         x = 2"""


def _patch_set(tmp_path: Path) -> Path:
    return write_patch_set(tmp_path, {"decode-guard.toml": GUARD, "decode-v1-limit.toml": EXPLAINED})


def _shipped_lines() -> dict[str, tuple[int, int]]:
    """First and last lines, in the shipped file, of the statements the steps match."""
    tree = ast.parse(shipped_source())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PagedAttention")
    decode = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward_decode")
    prefix = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_forward_prefix_pytorch")
    forced = next(n for n in decode.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                  and n.value.value is True)
    branch = next(n for n in decode.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "use_v1")
    actual = next(n for n in decode.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "actual_max")
    tile = next(n for n in ast.walk(prefix) if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "_BLOCKS_PER_TILE")
    found = {"decode": decode, "forced": forced, "branch": branch, "actual": actual, "tile": tile}
    return {name: (node.lineno, node.end_lineno or node.lineno) for name, node in found.items()}


def test_explain_says_every_part_of_the_patch_in_words(cli: Any, tmp_path: Path) -> None:
    patches = _patch_set(tmp_path)
    result = cli("explain", "decode-v1-limit", "--patches", patches)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"patch decode-v1-limit  ({patches / 'decode-v1-limit.toml'})\n" + \
        WORDS.format(small_max=8192, set="") + "\n"
    again = cli("explain", "decode-v1-limit", "--patches", patches, "--set", "decode-v1-limit.small_max=4096")
    assert again.stdout.splitlines()[1:] == WORDS.format(small_max=4096, set="  (set)").splitlines()


def test_explain_in_a_drop_shows_each_match_at_the_shipped_files_lines(cli: Any, tmp_path: Path) -> None:
    result = cli("explain", "decode-v1-limit", "--patches", _patch_set(tmp_path), "--in", VENDOR_TREE)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    where = lines[lines.index(f"In {VENDOR_TREE}:"):]
    at = _shipped_lines()
    v2 = where.index(next(line for line in where if line.startswith("      $...V2 = ")))
    assert where[:v2] == [
        f"In {VENDOR_TREE}:",
        f"  shipped file: {SHIPPED}",
        "  earlier in the series, decode-guard changed it; line numbers are the shipped file's",
        f"  scope PagedAttention.forward_decode: lines {at['decode'][0]}-{at['decode'][1]}",
        "  this patch: fails: step 5 (insert): expected the anchor 'if query.shape[0] == 0: / $...' 2 times, found it "
        "1 time in PagedAttention.forward_decode",
        f"  step 1, pattern: line {at['forced'][0]}",
        f"  step 2, anchor: lines {at['branch'][0]}-{at['branch'][1]}",
        "      $...V1_ARGS = output, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, "
        "block_size, max_seq_len, alibi_slopes",
    ]
    # A run of statements is shown as the file has it, its continuation lines under its first.
    assert where[v2:v2 + 3] == ["      $...V2 = # Run PagedAttention V2.",
                                "               assert _PARTITION_SIZE % block_size == 0",
                                "               tmp_output = torch.empty("]
    tail = where[where.index(f"  step 3, pattern: line {at['tile'][0]}"):]
    assert tail == [f"  step 3, pattern: line {at['tile'][0]}",
                    "      $N = 32",
                    f"  step 4, anchor: code an earlier patch of the series wrote (from line {at['actual'][0]})",
                    "  step 5, anchor: code an earlier patch of the series wrote",
                    "  step 6: no class or function 'forward_v3' in PagedAttention"]


def test_explain_json_in_a_drop_gives_the_same_matches(cli: Any, tmp_path: Path) -> None:
    result = cli("explain", "decode-v1-limit", "--patches", _patch_set(tmp_path), "--in", VENDOR_TREE,
                 "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(p["name"], p["bounds"], p["help"]) for p in data["params"]] == [
        ("small_max", "min 1", "Longest sequence, in tokens, that decodes with V1."), ("tiles", "max 64", ""),
        ("label", "", "")]
    assert data["patch"]["applied_when"] == [
        {"pattern": "use_v1 = actual_max <= 8192", "scope": "PagedAttention.forward_decode"},
        {"pattern": "_PYTORCH_DECODE_THRESHOLD = $_", "scope": "PagedAttention"}]
    assert [(s["number"], s["op"], s["scope"]) for s in data["steps"]] == [
        (1, "replace", "PagedAttention.forward_decode"), (2, "insert", "PagedAttention.forward_decode"),
        (3, "replace", "PagedAttention._forward_prefix_pytorch"), (4, "insert", "PagedAttention.forward_decode"),
        (5, "insert", "PagedAttention.forward_decode"), (6, "replace", "PagedAttention.forward_v3")]
    where = data["in"]
    at = _shipped_lines()
    assert (where["earlier"], where["status"], where["scope_lines"]) == (["decode-guard"], "fails", list(at["decode"]))
    assert where["detail"] == ("step 5 (insert): expected the anchor 'if query.shape[0] == 0: / $...' 2 times, "
                               "found it 1 time in PagedAttention.forward_decode")
    assert [(m["step"], m["what"], m["lines"]) for m in where["matches"]] == [
        (1, "pattern", [at["forced"][0]] * 2), (2, "anchor", list(at["branch"])), (3, "pattern", [at["tile"][0]] * 2),
        (4, "anchor", [at["actual"][0], None]), (5, "anchor", [None, None])]
    assert where["matches"][2]["captures"] == {"$N": "32"}
    assert where["matches"][2]["scope"] == "PagedAttention._forward_prefix_pytorch"
    assert where["unmatched"] == ["step 6: no class or function 'forward_v3' in PagedAttention"]


def test_explain_in_a_drop_whose_file_does_not_parse_or_lacks_the_scope(cli: Any, tmp_path: Path,
                                                                         vendor_copy: Path) -> None:
    patches = _patch_set(tmp_path)
    shipped = vendor_copy / SHIPPED
    source = shipped.read_text(encoding="utf-8")
    shipped.write_text(source.replace("        return output\n", "        return output)\n", 1), encoding="utf-8")
    result = cli("explain", "decode-v1-limit", "--patches", patches, "--in", vendor_copy)
    assert result.exit_code == 0, result.output
    where = result.stdout.splitlines()
    where = where[where.index(f"In {vendor_copy}:"):]
    assert where[:3] == [f"In {vendor_copy}:", f"  shipped file: {SHIPPED}",
                         "  scope PagedAttention.forward_decode: not in the file"]
    assert where[3].startswith("  this patch: fails: does not parse: line ") and len(where) == 4
    # The class renamed: the file parses, the scope is not there, and no step matches.
    shipped.write_text(source.replace("class PagedAttention:", "class PagedAttentionV2:"), encoding="utf-8")
    data = json.loads(cli("explain", "decode-v1-limit", "--patches", patches, "--in", vendor_copy,
                          "--format", "json").stdout)["in"]
    assert (data["scope_lines"], data["status"], data["matches"], data["earlier"]) == (None, "fails", [], [])
    assert data["unmatched"][0] == "step 1: no class or function 'PagedAttention' in the module"
