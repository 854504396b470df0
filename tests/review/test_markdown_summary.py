"""``diff --format markdown`` opens with a summary table and the failures; the diffs come after.

The table gives each patch of the series its status, the file it changes and the lines its own
step adds and removes (as ``--per-patch`` shows them); a reviewer sees what failed, with the
closest code, before the first diff.
"""

from __future__ import annotations

import json
import re

from tests.fixtures_cli import broken_drop, run_patcher
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

ROW = re.compile(r"^\| `(?P<id>[a-z0-9-]+)` \| (?P<status>[^|]+) \| (?P<files>[^|]+) \| (?P<lines>[^|]+) \| .+ \|$")


def _rows(text: str) -> dict[str, dict[str, str]]:
    return {m["id"]: {k: v.strip() for k, v in m.groupdict().items()}
            for m in map(ROW.match, text.splitlines()) if m}


def _own_lines() -> dict[str, str]:
    """Each patch's own +/- lines, from ``diff --per-patch --format json`` (computed independently)."""
    report = json.loads(run_patcher("diff", "--per-patch", "--format", "json", VENDOR_ZIP).stdout)
    return {s["patch"]["id"]: f"+{sum(f['insertions'] for f in s['files'])} -{sum(f['deletions'] for f in s['files'])}"
            for s in report["sections"] if s["patch"] is not None}


def test_the_table_gives_each_patch_its_status_file_and_own_lines_before_any_diff() -> None:
    text = run_patcher("diff", "--format", "markdown", VENDOR_ZIP).stdout
    rows = _rows(text)
    assert list(rows) == ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]
    assert {r["status"] for r in rows.values()} == {"applied"}
    assert {r["files"] for r in rows.values()} == {f"`{SHIPPED}` (+1 mirror)"}
    assert {patch: row["lines"] for patch, row in rows.items()} == _own_lines()
    assert text.index("| Patch | Status | Files | Lines |") < text.index("<details>")


def test_per_patch_markdown_gives_the_same_lines() -> None:
    text = run_patcher("diff", "--per-patch", "--format", "markdown", VENDOR_ZIP).stdout
    assert {patch: row["lines"] for patch, row in _rows(text).items()} == _own_lines()


def test_failures_and_rule_errors_come_before_the_diffs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = broken_drop(tmp_path, "triton-reenabled", "no-longer-applies")
    result = run_patcher("diff", "--keep-going", "--format", "markdown", tree)
    assert result.exit_code == 2
    text = result.stdout
    rows = _rows(text)
    assert (rows["three-tier-decode"]["status"], rows["three-tier-decode"]["files"]) == ("**failed**", "-")
    assert rows["prefix-pregather"]["status"] == "applied"
    table = text.index("| Patch | Status | Files | Lines |")
    failures = text.index("#### Patches that do not apply")
    rules = text.index("#### Safety rule errors in the input")
    first_diff = text.index("<details>")
    assert table < failures < rules < first_diff
    assert "closest: lines " in text[failures:rules]
