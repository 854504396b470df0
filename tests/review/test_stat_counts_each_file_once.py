"""``diff --stat`` counts each file once, from what the vendor shipped to what apply writes, whatever the patches.

Under ``--per-patch`` a file several patches change is listed in each
patch's section (that patch's own change); the summary line, and the JSON
and Markdown ``stat``, still count the file once and its whole change, the
same as without ``--per-patch``.
"""

from __future__ import annotations

import json

from patcher.review import render
from patcher.review.changes import DiffReport, FileDiff, Section
from patcher.review.textdiff import FileChange

ORIGINAL = b"".join(b"line %d\n" % n for n in range(1, 41))


def sections_of_one_file(*steps: bytes) -> tuple[Section, ...]:
    """Return one section per step, each turning the content before it into the next; the file is ``x.py``."""
    sections, before = [], ORIGINAL
    for after in steps:
        sections.append(Section((FileDiff(FileChange("x.py", before, after), ()),), title="a patch"))
        before = after
    return tuple(sections)


def test_a_line_two_patches_change_in_turn_counts_once() -> None:
    first = ORIGINAL.replace(b"line 20\n", b"line 20 once\n")
    second = first.replace(b"line 21\n", b"").replace(b"line 20 once\n", b"line 21\nline 20 once\n")
    report = DiffReport("v.zip", None, sections_of_one_file(first, second), per_patch=True)
    whole = FileChange("x.py", ORIGINAL, second).counts()
    assert report.stat() == (1, *whole)
    steps = [s.files[0].change.counts() for s in report.sections]
    assert sum(a for a, _ in steps) > whole[0]  # what summing the sections would say instead
    assert render.stat(report).splitlines()[-1] == \
        f" 1 file changed, {whole[0]} insertion{'s' if whole[0] != 1 else ''}(+), " \
        f"{whole[1]} deletion{'s' if whole[1] != 1 else ''}(-)"


def test_a_change_a_later_patch_undoes_counts_nothing() -> None:
    there = ORIGINAL.replace(b"line 5\n", b"line 5\nextra\n")
    report = DiffReport("v.zip", None, sections_of_one_file(there, ORIGINAL), per_patch=True)
    assert report.stat() == (1, 0, 0)


def test_each_section_still_lists_its_own_change() -> None:
    first = ORIGINAL.replace(b"line 2\n", b"line two\n")
    second = first.replace(b"line 30\n", b"line thirty\nline 30.5\n")
    rows = [line for line in render.stat(DiffReport("v.zip", None, sections_of_one_file(first, second),
                                                    per_patch=True)).splitlines() if line.startswith(" x.py")]
    assert rows == [" x.py | 2 +-", " x.py | 3 ++-"]


def test_per_patch_and_plain_stat_agree_on_the_vendor_drop(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    plain = cli("diff", "--stat", vendor_zip).stdout.splitlines()
    per_patch = cli("diff", "--stat", "--per-patch", vendor_zip).stdout.splitlines()
    assert plain[-1] == per_patch[-1] and plain[-1].startswith(" 2 files changed, ")
    stats = [json.loads(cli("diff", "--format", "json", *flags, vendor_zip).stdout)["stat"]
             for flags in ((), ("--per-patch",))]
    assert stats[0] == stats[1] and stats[0]["files"] == 2
