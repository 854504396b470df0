"""How ``patcher diff`` shows a report: the ``#`` lines, ``--per-patch`` titles, ``--stat``, JSON, colour.

Built from DiffReport values holding the bundled patches, so each rendering is
pinned whole: the words a reviewer reads, the column widths of ``--stat``,
the plural of "file", which lines are coloured how.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from patcher.review import render
from patcher.review.changes import BaseRef, DiffReport, FileDiff, Section
from patcher.review.textdiff import FileChange

from tests.fixtures_vendor import SHIPPED

DECODE = "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch"
GATHER = "Gather the prefill context K/V in groups of tiles, one gather per group"


def lines(count: int) -> bytes:
    return b"".join(b"line %d\n" % n for n in range(1, count + 1))


@pytest.fixture
def patches(bundled):  # type: ignore[no-untyped-def]
    return bundled.patches


def shipped_change(before: bytes = b"a\nb\nc\n", after: bytes = b"a\nB\nc\n") -> FileChange:
    return FileChange(SHIPPED, before, after)


# -- the unified diff's comments ----------------------------------------------------------------


def test_each_file_is_headed_by_its_path_and_its_patches_in_aligned_columns(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, _ = patches
    item = FileDiff(shipped_change(), (decode, gather))
    assert render.annotation(item) == [SHIPPED, f"  three-tier-decode  {DECODE}", f"  prefix-pregather   {GATHER}"]
    mirror = FileDiff(FileChange("paged_attn.py", b"x\n", b"y\n"), (gather,), mirror_of=SHIPPED)
    assert render.annotation(mirror) == [f"paged_attn.py: mirror of {SHIPPED}, made identical to it",
                                         f"  prefix-pregather  {GATHER}"]
    assert render.annotation(FileDiff(FileChange(".dockerignore", None, b"m\n"), ())) == [".dockerignore"]


def test_the_plain_diff_is_comments_then_each_file_s_diff(patches) -> None:  # type: ignore[no-untyped-def]
    decode = patches[0]
    report = DiffReport("drop.zip", "0123456789abcdef", (Section((FileDiff(shipped_change(), (decode,)),)),))
    assert render.unified(report) == (
        f"# {SHIPPED}\n#   three-tier-decode  {DECODE}\n"
        f"diff --git a/{SHIPPED} b/{SHIPPED}\n--- a/{SHIPPED}\n+++ b/{SHIPPED}\n"
        "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n").encode()


def test_a_base_diff_opens_with_the_revision_it_compares_with(patches) -> None:  # type: ignore[no-untyped-def]
    report = DiffReport("drop.zip", None, (Section(()),), base=BaseRef("HEAD~1", "fedcba9876543210fedc"))
    assert render.unified(report) == b"# patch set at HEAD~1 (fedcba987654) -> working tree\n"


def test_a_path_holding_a_line_break_stays_one_comment_line(patches) -> None:  # type: ignore[no-untyped-def]
    item = FileDiff(FileChange("odd\nname.py", b"a\n", b"b\n"), (patches[0],))
    out = render.unified(DiffReport("drop.zip", None, (Section((item,)),)))
    assert out.startswith(b"# odd name.py\n#   three-tier-decode  ")


def per_patch_report(patches) -> DiffReport:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    first = FileDiff(shipped_change(), (decode,))
    mirror = FileDiff(FileChange("paged_attn.py", b"a\r\nb\r\nc\r\n", b"a\nB\nc\n"), (decode,), mirror_of=SHIPPED)
    return DiffReport("drop.zip", None, (
        Section((first,), patch=decode, status="applied"),
        Section((), patch=gather, status="already applied"),
        Section((), patch=reuse, status="failed"),
        Section((mirror,), title="mirrors: stale copies made identical to the patched shipped copies"),
    ), per_patch=True)


def test_per_patch_sections_are_numbered_among_the_patches_only(patches) -> None:  # type: ignore[no-untyped-def]
    report = per_patch_report(patches)
    assert render.titles(report) == [
        f"[1/3] three-tier-decode (applied): {DECODE}",
        f"[2/3] prefix-pregather (already applied): {GATHER}",
        "[3/3] prefix-buffer-reuse (failed): Reuse preallocated buffers in the prefill online-softmax update",
        "mirrors: stale copies made identical to the patched shipped copies",
    ]
    assert render.titles(replace(report, per_patch=False)) == [None, None, None, None]
    untitled = DiffReport("x", None, (Section(()),), per_patch=True)
    assert render.titles(untitled) == [""]


def test_a_per_patch_section_that_changed_nothing_says_so(patches) -> None:  # type: ignore[no-untyped-def]
    comments = [line for line in render.unified(per_patch_report(patches)).decode().splitlines()
                if line.startswith("#")]
    assert comments == [
        f"# ==== [1/3] three-tier-decode (applied): {DECODE}",
        f"# {SHIPPED}",
        f"#   three-tier-decode  {DECODE}",
        f"# ==== [2/3] prefix-pregather (already applied): {GATHER}",
        "# (no change)",
        "# ==== [3/3] prefix-buffer-reuse (failed): Reuse preallocated buffers in the prefill online-softmax update",
        "# (no change)",
        "# ==== mirrors: stale copies made identical to the patched shipped copies",
        f"# paged_attn.py: mirror of {SHIPPED}, made identical to it",
        f"#   three-tier-decode  {DECODE}",
    ]


# -- --stat ----------------------------------------------------------------------------------------


def test_stat_rows_align_names_and_counts_and_scale_bars_to_fifty_columns(patches) -> None:  # type: ignore[no-untyped-def]
    big = FileDiff(FileChange("paged_attn.py", lines(120).replace(b"\n", b"\r\n"), lines(120)), ())
    small = FileDiff(FileChange(SHIPPED, lines(120), lines(120).replace(b"line 5\n", b"five\n")
                                .replace(b"line 60\n", b"") + b"tail\n"), ())
    report = DiffReport("drop.zip", None, (Section((small, big)),))
    assert render.STAT_WIDTH == 50
    assert render.stat(report) == (
        f" {SHIPPED} |   4 +-\n"  # 2 and 2 scaled by 50/240 round to 0: each still gets one mark
        f" paged_attn.py                 | 240 {'+' * 25}{'-' * 25}\n"
        " 2 files changed, 122 insertions(+), 122 deletions(-)\n")


def test_stat_bars_are_not_scaled_under_fifty_lines_and_binary_files_say_bin() -> None:
    text = FileDiff(FileChange("a.py", b"1\n2\n3\n", b"1\nx\ny\nz\n3\n"), ())
    binary = FileDiff(FileChange("libops.so", b"\0a", b"\0b"), ())
    added = FileDiff(FileChange("new.py", None, b"only\n"), ())
    report = DiffReport("drop.zip", None, (Section((text, binary, added)),))
    assert render.stat(report) == (
        " a.py      | 4 +++-\n"
        " libops.so | Bin\n"
        " new.py    | 1 +\n"
        " 3 files changed, 4 insertions(+), 1 deletion(-)\n")


def test_stat_says_one_file_one_insertion_one_deletion_in_the_singular() -> None:
    report = DiffReport("drop.zip", None, (Section((FileDiff(shipped_change(), ()),)),))
    assert render.stat(report) == f" {SHIPPED} | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"
    assert render.stat(DiffReport("drop.zip", None, ())) == " 0 files changed, 0 insertions(+), 0 deletions(-)\n"


def test_stat_under_per_patch_titles_each_section_and_totals_each_file_once(patches) -> None:  # type: ignore[no-untyped-def]
    assert render.stat(per_patch_report(patches)).splitlines() == [
        f"# [1/3] three-tier-decode (applied): {DECODE}",
        f" {SHIPPED} | 2 +-",
        f"# [2/3] prefix-pregather (already applied): {GATHER}",
        "# [3/3] prefix-buffer-reuse (failed): Reuse preallocated buffers in the prefill online-softmax update",
        "# mirrors: stale copies made identical to the patched shipped copies",
        " paged_attn.py | 6 +++---",
        " 2 files changed, 4 insertions(+), 4 deletions(-)",
    ]


# -- JSON -------------------------------------------------------------------------------------------


def test_json_gives_every_field_of_every_section_and_file(patches) -> None:  # type: ignore[no-untyped-def]
    decode = patches[0]
    report = per_patch_report(patches)
    data = render.to_json(replace(report, commit="abc-dirty", base=BaseRef("main", "f" * 40)))
    assert data["input"] == "drop.zip" and data["patch_set_commit"] == "abc-dirty"
    assert data["base"] == {"ref": "main", "commit": "f" * 40}
    assert data["per_patch"] is True and data["empty"] is False
    assert data["stat"] == {"files": 2, "insertions": 4, "deletions": 4}
    first, second, _, mirrors = data["sections"]
    assert first == {
        "patch": {"id": "three-tier-decode", "summary": DECODE}, "status": "applied", "title": None,
        "files": [{"path": SHIPPED, "mirror_of": None, "patches": [{"id": decode.id, "summary": DECODE}],
                   "insertions": 1, "deletions": 1, "binary": False,
                   "diff": f"diff --git a/{SHIPPED} b/{SHIPPED}\n--- a/{SHIPPED}\n+++ b/{SHIPPED}\n"
                           "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}],
    }
    assert second["files"] == [] and second["status"] == "already applied"
    assert mirrors["patch"] is None and mirrors["title"].startswith("mirrors: ")
    assert mirrors["files"][0]["mirror_of"] == SHIPPED
    assert render.to_json(DiffReport("d", None, ()))["base"] is None
    assert render.to_json(DiffReport("d", None, ()))["empty"] is True


def test_json_without_diffs_leaves_them_out_and_undecodable_bytes_are_replaced() -> None:
    item = FileDiff(FileChange("latin1.py", b"caf\xe9\n", b"cafe\n"), ())
    report = DiffReport("drop.zip", None, (Section((item,)),))
    assert render.to_json(report, diffs=False)["sections"][0]["files"][0]["diff"] is None
    assert "-caf\ufffd\n+cafe\n" in render.to_json(report)["sections"][0]["files"][0]["diff"]
    binary = render.to_json(DiffReport("d", None, (Section((FileDiff(FileChange("b", b"\0", b"\1\0"), ()),)),)))
    assert binary["sections"][0]["files"][0]["binary"] is True


# -- colour ------------------------------------------------------------------------------------------


def test_colour_marks_headers_bold_hunks_cyan_additions_green_removals_red_comments_yellow() -> None:
    diff = (b"# qwen3_6_scripts/paged_attn.py\r\n"
            b"diff --git a/x b/x\nold mode 100644\nnew mode 100755\nnew file mode 100644\n"
            b"deleted file mode 100644\nBinary files a/x and b/x differ\n--- a/x\n+++ b/x\n"
            b"@@ -1,2 +1,2 @@\n context\n-old\n+new\n\\ No newline at end of file")
    assert render.colour(diff) == (
        b"\x1b[33m# qwen3_6_scripts/paged_attn.py\r\x1b[m\n"
        b"\x1b[1mdiff --git a/x b/x\x1b[m\n\x1b[1mold mode 100644\x1b[m\n\x1b[1mnew mode 100755\x1b[m\n"
        b"\x1b[1mnew file mode 100644\x1b[m\n\x1b[1mdeleted file mode 100644\x1b[m\n"
        b"\x1b[1mBinary files a/x and b/x differ\x1b[m\n\x1b[1m--- a/x\x1b[m\n\x1b[1m+++ b/x\x1b[m\n"
        b"\x1b[36m@@ -1,2 +1,2 @@\x1b[m\n context\n\x1b[31m-old\x1b[m\n\x1b[32m+new\x1b[m\n"
        b"\\ No newline at end of file")
    assert render.colour(b"") == b""
    # Only the line end stays outside the colour: a line that ends in other characters keeps them inside.
    assert render.colour(b"+MAX\n-X") == b"\x1b[32m+MAX\x1b[m\n\x1b[31m-X\x1b[m"
