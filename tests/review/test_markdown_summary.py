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


# -- the rows, from builds (series.replay gives each patch's own step) -------------------------------


def _own_counts(build) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Each patch's own lines added and removed, counted by difflib on the replayed steps."""
    import difflib

    from patcher.review.series import replay

    counts = {}
    for step in replay(build):
        before, after = step.before.decode().splitlines(), step.after.decode().splitlines()
        lines = list(difflib.unified_diff(before, after, lineterm="", n=0))[2:]
        counts[step.patch.id] = (sum(1 for line in lines if line.startswith("+")),
                                 sum(1 for line in lines if line.startswith("-")))
    return counts


def test_each_row_has_the_patch_s_status_file_mirrors_and_own_lines(demo_build) -> None:  # type: ignore[no-untyped-def]
    from patcher.review.changes import apply_diff, per_patch_diff
    from patcher.review.render import summary_rows

    own = _own_counts(demo_build)
    rows = summary_rows(demo_build, apply_diff(demo_build, "d"))
    assert [(r.patch.id, r.status, r.files, r.mirrors, (r.added, r.removed)) for r in rows] == [
        (patch, "applied", (SHIPPED,), 1, own[patch]) for patch in own]
    assert summary_rows(demo_build, per_patch_diff(demo_build, "d")) == rows
    assert all(r.added and r.removed for r in rows)


def test_a_patch_alone_on_its_file_counts_the_file_s_diff(bundled) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from patcher.review.changes import apply_diff
    from patcher.review.render import summary_rows
    from tests.fixtures_vendor import VENDOR_TREE

    alone = build(DirSource(VENDOR_TREE), replace(bundled, patches=bundled.patches[1:2]))
    (row,) = summary_rows(alone, apply_diff(alone, "d"))
    shipped = apply_diff(alone, "d").files[0]
    assert (row.patch.id, row.status, row.files, row.mirrors) == ("prefix-pregather",
                                                                  "applied", (SHIPPED,), 1)
    assert (row.added, row.removed) == shipped.change.counts() == _own_counts(alone)["prefix-pregather"]


def test_a_failed_or_already_applied_patch_shows_no_file(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from patcher.review.changes import apply_diff
    from patcher.review.render import summary_rows

    failing = build(DirSource(broken_drop(tmp_path / "failing", "no-longer-applies")), bundled)
    rows = {r.patch.id: r for r in summary_rows(failing, apply_diff(failing, "d"))}
    assert (rows["three-tier-decode"].status, rows["three-tier-decode"].files, rows["three-tier-decode"].mirrors) == (
        "failed", (), 0)
    assert (rows["prefix-pregather"].status, rows["prefix-pregather"].files) == ("applied", (SHIPPED,))
    done = build(DirSource(broken_drop(tmp_path / "done", "already-applied")), bundled)
    rows = {r.patch.id: r for r in summary_rows(done, apply_diff(done, "d"))}
    assert (rows["three-tier-decode"].status, rows["three-tier-decode"].files, rows["three-tier-decode"].mirrors,
            rows["three-tier-decode"].added, rows["three-tier-decode"].removed) == ("already applied", (), 0, 0, 0)
    assert rows["prefix-buffer-reuse"].files == (SHIPPED,)


def test_a_target_that_does_not_parse_fails_every_patch_on_it(bundled, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from patcher.review.changes import apply_diff
    from patcher.review.render import summary_rows

    (vendor_copy / SHIPPED).write_text("def forward_decode(:\n")
    broken = build(DirSource(vendor_copy), bundled)
    rows = summary_rows(broken, apply_diff(broken, "d"))
    assert [(r.status, r.files, r.mirrors, r.added, r.removed) for r in rows] == [("failed", (), 0, 0, 0)] * 3
