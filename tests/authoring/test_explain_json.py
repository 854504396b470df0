"""``patcher explain --format json``: the header, parameters and steps field by field, and where the patch matches in a drop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.authoring.conftest import decode_lines
from tests.fixtures_patches import edit_file
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP


def test_explain_json_without_a_drop_field_by_field(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--format", "json",
                 "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"patch", "params", "steps", "in"}
    assert data["in"] is None
    header = data["patch"]
    assert header["id"] == "three-tier-decode"
    assert header["path"] == str(PATCHES / "three-tier-decode.toml")
    assert header["summary"] == "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch"
    assert header["description"].startswith(header["summary"] + "\n\nThe vendor forces V1")
    assert header["origin"].startswith("other, patcher project")
    assert header["last_update"] == "2026-11-29"
    assert (header["target"], header["scope"]) == ("vllm/attention/ops/paged_attn.py", "PagedAttention.forward_decode")
    assert {"pattern": "use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable",
            "scope": "PagedAttention.forward_decode"} in header["applied_when"]
    assert {"pattern": "actual_max = $_", "scope": "PagedAttention.forward_decode"} in header["requires"]
    small, large = data["params"]
    assert small == {"name": "small_max", "type": "int", "default": 8192, "value": 4096, "set": True,
                     "help": "Longest sequence, in tokens, that always decodes with the V1 kernel.", "bounds": "1..32768"}
    assert (large["name"], large["value"], large["default"], large["set"]) == ("large_threshold", 32768, 32768, False)
    assert [step["number"] for step in data["steps"]] == [1, 2]
    step = data["steps"][1]
    assert (step["op"], step["scope"]) == ("replace", "PagedAttention.forward_decode")
    assert step["words"][0] == ("replace, in PagedAttention.forward_decode, each run of statements matching "
                                "(expected once):")
    assert "    use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in step["words"]
    assert [p["what"] for p in step["patterns"]] == ["pattern"]
    assert step["patterns"][0]["pattern"].splitlines()[:2] == ["use_v1 = $HEURISTIC", "use_v1 = True"]


def test_explain_json_in_a_drop_gives_file_scope_lines_and_captures(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", VENDOR_ZIP, "--format", "json")
    assert result.exit_code == 0, result.output
    where = json.loads(result.stdout)["in"]
    threshold, first, last = decode_lines()
    assert where["vendor"] == str(VENDOR_ZIP)
    assert where["shipped"] == SHIPPED
    assert where["scope"] == "PagedAttention.forward_decode"
    assert where["scope_lines"][0] < first and where["scope_lines"][1] >= last
    assert (where["earlier"], where["status"], where["detail"], where["diagnostic"]) == ([], "applies", "", None)
    assert where["unmatched"] == []
    one, two = where["matches"]
    assert one == {"step": 1, "file": SHIPPED, "scope": "PagedAttention", "what": "pattern",
                   "lines": [threshold, threshold], "captures": {"$OLD": "32768"}}
    assert (two["step"], two["file"], two["scope"], two["what"], two["lines"]) == (
        2, SHIPPED, "PagedAttention.forward_decode", "pattern", [first, last])
    assert set(two["captures"]) == {"$HEURISTIC", "$...V1_ARGS", "$...V2_SETUP", "$...V2_ARGS"}
    assert two["captures"]["$HEURISTIC"] == (
        "(max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))")
    assert two["captures"]["$...V1_ARGS"].startswith("output, query, key_cache, value_cache, num_kv_heads")


def test_explain_json_in_a_drop_the_patch_does_not_fit(cli: Any, vendor_copy: Path) -> None:
    shipped = vendor_copy / SHIPPED
    edit_file(shipped, "        use_v1 = True  # BI-V100: the V2 kernel is not available\n", "")
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", vendor_copy, "--format", "json")
    assert result.exit_code == 0, result.output
    where = json.loads(result.stdout)["in"]
    _, first, last = decode_lines(shipped.read_text(encoding="utf-8"))
    assert where["status"] == "fails"
    assert where["detail"].startswith("step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    diagnostic = where["diagnostic"]
    assert (diagnostic["kind"], diagnostic["step"], diagnostic["scope"]) == ("step", 2, "PagedAttention.forward_decode")
    closest = diagnostic["closest"]
    assert (closest["first_line"], closest["last_line"], closest["statement"]) == (first, last, 2)
    assert (closest["pattern"], closest["code"]) == ("use_v1 = True", "if use_v1: ...")
    assert [m["step"] for m in where["matches"]] == [1]
    assert where["unmatched"][0].startswith("step 2: pattern 'use_v1 = $HEURISTIC")
