"""A patch that fails names what came closest: the scopes with the closest names, the closest run of
statements by the lines of the file as read, or, for a step that matches too often, how often.
"""

from __future__ import annotations

import ast
import json
import re
import shutil

from tests.fixtures_cli import SERIES, broken_drop, run_patcher
from tests.fixtures_vendor import SHIPPED


def test_a_missing_scope_names_the_scopes_with_the_closest_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path)
    shipped = tree / SHIPPED
    shipped.write_bytes(shipped.read_bytes().replace(b"def forward_decode(", b"def forward_decode_v1("))
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    [failure] = json.loads(result.stdout)["failed"]
    assert failure["diagnostic"]["kind"] == "scope"
    assert failure["diagnostic"]["scope"] == "PagedAttention.forward_decode"
    assert failure["diagnostic"]["scopes"][0] == "PagedAttention.forward_decode_v1"
    assert "scopes with close names: PagedAttention.forward_decode_v1" in failure["message"]


def test_a_step_that_matches_too_often_has_no_closest_to_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path)
    shipped = tree / SHIPPED
    # A second class attribute of the same name: step 1 matches twice, not zero times.
    lines = shipped.read_bytes().splitlines(keepends=True)
    [line] = [n.lineno for n in ast.walk(ast.parse(b"".join(lines))) if isinstance(n, ast.Assign)
              and [ast.unparse(t) for t in n.targets] == ["_PYTORCH_DECODE_THRESHOLD"]]
    lines.insert(line, lines[line - 1])
    shipped.write_bytes(b"".join(lines))
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    [failure] = json.loads(result.stdout)["failed"]
    assert "found it 2 times" in failure["detail"]
    assert failure["diagnostic"] is None


def test_closest_code_of_a_later_patch_is_named_by_the_lines_of_the_file_as_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path)
    shipped = tree / SHIPPED
    # Another layout for the key gather: prefix-pregather's step 2 no longer matches, after
    # three-tier-decode and prefix-pregather's own step 1 have added lines above it.
    shipped.write_bytes(re.sub(rb"permute\(0,\s*3,\s*1,\s*2,\s*4\)", b"permute(0, 3, 2, 1, 4)", shipped.read_bytes()))
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    [failure] = json.loads(result.stdout)["failed"]
    assert failure["patch"] == "prefix-pregather"
    closest = failure["diagnostic"]["closest"]
    assert closest["code"].startswith("k_tile = key_cache[blk_ids].permute(0, 3, 2, 1, 4)")
    lines = shipped.read_text().splitlines()
    assert "k_tile = (key_cache[blk_ids]" in lines[closest["first_line"] - 1]
    assert lines[closest["last_line"] - 1].strip().endswith(".view(-1, num_kv_heads, head_dim))")


def test_an_upstream_like_file_names_the_missing_requirement_and_scopes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path)
    shutil.copyfile(tree / "paged_attn.py", tree / SHIPPED)  # the upstream-like stale root copy
    result = run_patcher("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    failed = {f["patch"]: f for f in json.loads(result.stdout)["failed"]}
    assert list(failed) == list(SERIES)
    requires = failed["three-tier-decode"]["diagnostic"]
    assert (requires["kind"], requires["scope"], requires["step"]) == ("requires", "PagedAttention.forward_decode", None)
    assert requires["pattern"] == "actual_max = $_"
    assert requires["closest"]["pattern"] == "actual_max = $_"
    assert requires["closest"]["code"].split(" = ")[0].isidentifier()  # an assignment is closest to an assignment
    for patch_id in SERIES[1:]:
        scope = failed[patch_id]["diagnostic"]
        assert (scope["kind"], scope["scope"]) == ("scope", "PagedAttention._forward_prefix_pytorch")
        assert "PagedAttention.forward_prefix" in scope["scopes"]
        assert failed[patch_id]["message"].endswith("scopes with close names: " + ", ".join(scope["scopes"]))
