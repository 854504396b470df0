"""Each line a patch writes is that patch's; a later patch that rewrites or deletes it fails, naming the owner and the line.

Owned lines are followed as later patches insert, rewrite and delete code
around them; lines inserted next to them belong to the inserter; the line
named is the one an editor shows (form feeds and U+2028 included), and a
line repeated all over a long file is not taken for an edit.
"""

from __future__ import annotations

from typing import Any

import pytest

from patcher.patchset.runner import Status, patch_source

from tests.fixtures_patches import insert_step, patch_toml, replace_step
from tests.patchset.conftest import CLASH, SOURCE, run_series


def test_two_patches_rewriting_one_line_fail_the_second_and_keep_the_first(load_patch: Any) -> None:
    first = load_patch(patch_toml("first", replace_step("y = 2", "y = 3")))
    second = load_patch(patch_toml("second", replace_step("y = 3", "y = 4")))
    result = patch_source("x.py", SOURCE, [first, second])
    assert [(o.patch.id, o.status) for o in result.outcomes] == [("first", Status.APPLIED), ("second", Status.FAILED)]
    assert result.outcomes[1].detail == (
        "rewrites code that patch first wrote (line 3); two patches must not rewrite"
        " the same code: merge them or reorder the series"
    )
    assert result.patched == SOURCE.replace(b"y = 2", b"y = 3")


def test_two_patches_on_different_lines_both_apply(load_patch: Any) -> None:
    first = load_patch(patch_toml("first", replace_step("y = 2", "y = 3")))
    second = load_patch(patch_toml("second", replace_step("x = 1", "x = 4")))
    result = patch_source("x.py", SOURCE, [first, second])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED]
    assert result.patched == b"def f():\n    x = 4\n    y = 3\n    return x + y\n"


def test_lines_a_patch_wrote_are_tracked_as_later_patches_move_them(load_patch: Any) -> None:
    # 'grow' turns one line into two, moving the lines below it down; 'below'
    # rewrites a line no patch wrote (line 3 as read, 4 now); 'again'
    # rewrites the second line 'grow' wrote.
    grow = load_patch(patch_toml("grow", replace_step("x = 1", "x = 1\nx += 0")))
    below = load_patch(patch_toml("below", replace_step("y = 2", "y = 3")))
    again = load_patch(patch_toml("again", replace_step("x += 0", "x += 5")))
    source = b"def f():\n    x = 1\n    y = 2\n    return x + y\n"
    result = patch_source("x.py", source, [grow, below, again])
    assert [(o.patch.id, o.status) for o in result.outcomes] == [
        ("grow", Status.APPLIED), ("below", Status.APPLIED), ("again", Status.FAILED)
    ]
    assert result.outcomes[2].detail == (
        "rewrites code that patch grow wrote (line 3); two patches must not rewrite"
        " the same code: merge them or reorder the series"
    )
    assert result.patched == b"def f():\n    x = 1\n    x += 0\n    y = 3\n    return x + y\n"


GROW = ("grow", "y = 2", "y = 2\ny += 0")  # writes one new line below 'y = 2'


LEAD = ("lead", "x = 1", "x = 1\nw = 0")  # then one above it, moving it down


@pytest.mark.parametrize(
    ("last", "status", "detail"),
    [
        (("again", "y += 0", "y += 5"), Status.FAILED,
         "rewrites code that patch grow wrote (line 5); two patches must not rewrite"
         " the same code: merge them or reorder the series"),
        (("other", "y = 2", "y = 3"), Status.APPLIED, ""),  # where grow's line was before 'lead' moved it
    ],
    ids=["rewrites-the-moved-line", "rewrites-the-line-now-above-it"],
)
def test_a_patchs_lines_are_followed_as_later_patches_move_them(
    load_patch: Any, last: tuple[str, str, str], status: Status, detail: str
) -> None:
    patches = [load_patch(patch_toml(pid, replace_step(old, new))) for pid, old, new in (GROW, LEAD, last)]
    result = patch_source("x.py", SOURCE, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED, status]
    assert result.outcomes[2].detail == detail


def test_lines_inserted_right_above_a_patchs_line_belong_to_the_inserter(load_patch: Any) -> None:
    # 'tune' writes 'y = 3'; 'guard' inserts 'w = 0' right above it; 'again'
    # rewrites 'w = 0': the code it rewrites is guard's, not tune's.
    outcomes = run_series(load_patch, SOURCE, ("tune", replace_step("y = 2", "y = 3")),
                          ("guard", insert_step("before", "y = 3", "w = 0")), ("again", replace_step("w = 0", "w = 5")))
    assert outcomes == [("tune", Status.APPLIED, ""), ("guard", Status.APPLIED, ""),
                        ("again", Status.FAILED, CLASH.format("guard", 3))]


def test_lines_inserted_right_below_a_patchs_line_belong_to_the_inserter(load_patch: Any) -> None:
    outcomes = run_series(load_patch, SOURCE, ("tune", replace_step("y = 2", "y = 3")),
                          ("guard", insert_step("after", "y = 3", "w = 0")), ("again", replace_step("w = 0", "w = 5")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("guard", 4))


def test_a_patchs_line_moved_down_by_a_rewrite_above_it_stays_its_own(load_patch: Any) -> None:
    # 'split' turns 'x = 1' into two lines just above tune's 'y = 3'.
    outcomes = run_series(load_patch, SOURCE, ("tune", replace_step("y = 2", "y = 3")),
                          ("split", replace_step("x = 1", "a = 0\nx = a + 1")), ("again", replace_step("y = 3", "y = 4")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("tune", 4))


def test_the_line_a_rewrite_above_a_patchs_line_wrote_is_the_rewriters(load_patch: Any) -> None:
    outcomes = run_series(load_patch, SOURCE, ("tune", replace_step("y = 2", "y = 3")),
                          ("split", replace_step("x = 1", "a = 0\nx = a + 1")), ("again", replace_step("x = a + 1", "x = a + 2")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("split", 3))


def test_lines_around_a_patchs_moved_line_are_free_to_rewrite(load_patch: Any) -> None:
    # 'lead' moves tune's line down by one; the lines just above and below
    # it then are no patch's, and a third patch may rewrite them.
    lead = ("lead", insert_step("before", "x = 1", "w = 0"))
    tune = ("tune", replace_step("y = 2", "y = 3"))
    above = run_series(load_patch, SOURCE, tune, lead, ("above", replace_step("x = 1", "x = 7")))
    below = run_series(load_patch, SOURCE, tune, lead, ("below", replace_step("return x + y", "return x - y")))
    assert above[2] == ("above", Status.APPLIED, "") and below[2] == ("below", Status.APPLIED, "")


def test_code_inserted_between_two_lines_of_one_patch_is_the_inserters(load_patch: Any) -> None:
    # 'pair' rewrites two lines; 'guard' inserts between them. Rewriting the
    # inserted line names guard; rewriting the second line still names pair,
    # at its new line; a rewrite spanning both names the first line it rewrites.
    pair = ("pair", replace_step("x = 1\ny = 2", "x = 5\ny = 6"))
    guard = ("guard", insert_step("after", "x = 5", "w = 0"))
    inserted = run_series(load_patch, SOURCE, pair, guard, ("again", replace_step("w = 0", "w = 1")))
    second = run_series(load_patch, SOURCE, pair, guard, ("again", replace_step("y = 6", "y = 7")))
    both = run_series(load_patch, SOURCE, pair, guard, ("again", replace_step("w = 0\ny = 6", "w = 1\ny = 7")))
    assert inserted[2] == ("again", Status.FAILED, CLASH.format("guard", 3))
    assert second[2] == ("again", Status.FAILED, CLASH.format("pair", 4))
    assert both[2] == ("again", Status.FAILED, CLASH.format("guard", 3))


def test_a_patch_deleting_lines_another_patch_wrote_fails(load_patch: Any) -> None:
    # 'debug' adds a line; 'tidy' takes it out again (the rest of its match is
    # kept word for word, so the change is a pure deletion).
    outcomes = run_series(load_patch, SOURCE, ("debug", insert_step("before", "y = 2", "print(x)")),
                          ("tidy", replace_step("print(x)\ny = 2", "y = 2")))
    assert outcomes == [("debug", Status.APPLIED, ""), ("tidy", Status.FAILED, CLASH.format("debug", 3))]


def test_a_patch_deleting_lines_no_patch_wrote_applies_and_moves_the_owned_ones_up(load_patch: Any) -> None:
    # 'tidy' deletes 'x = 1' above tune's line (keeping that line as it is).
    tune, tidy = ("tune", replace_step("y = 2", "y = 3")), ("tidy", replace_step("x = 1\ny = 3", "y = 3"))
    result = patch_source("x.py", SOURCE, [load_patch(patch_toml(pid, steps)) for pid, steps in (tune, tidy)])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED]
    assert result.patched == b"def f():\n    y = 3\n    return x + y\n"
    outcomes = run_series(load_patch, SOURCE, tune, tidy, ("again", replace_step("y = 3", "y = 4")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("tune", 2))


def test_the_line_named_is_the_editors_line_in_a_file_with_form_feeds(load_patch: Any) -> None:
    # GNU-style sources separate sections with a form feed (^L) line; it is
    # one line in an editor, and so is a docstring holding U+2028.
    source = ('"""Ops.\u2028Second paragraph."""\nimport os\n\x0c\n# Section two\n' + SOURCE.decode()).encode()
    outcomes = run_series(load_patch, source, ("tune", replace_step("y = 2", "y = 3")), ("again", replace_step("y = 3", "y = 4")))
    assert source.split(b"\n").index(b"    y = 2") + 1 == 7
    assert outcomes[1] == ("again", Status.FAILED, CLASH.format("tune", 7))


def _kernel_module(steps: int) -> bytes:
    """A vendor-style file of many small launch wrappers, each ending in the same synchronize call."""
    head = '"""Launch wrappers for the fused kernels (generated, do not edit)."""\n\nimport torch\n\n'
    wrappers = "".join(
        f"\n\ndef launch_{n}(x, scale):\n"
        f"    # stage {n}\n"
        f"    out = torch.ops.vendor.stage_{n}(x, scale)\n"
        f"    torch.cuda.synchronize()\n"
        f"    return out\n"
        for n in range(steps)
    )
    return (head + wrappers).encode()


def test_a_line_repeated_all_over_a_long_file_between_two_edits_is_not_the_editors(load_patch: Any) -> None:
    # In a file of 200 lines or more, difflib's "autojunk" would treat a line
    # repeated in every function (the synchronize call) as junk, fold it into
    # the edits around it, and blame the next patch that rewrites it.
    source = _kernel_module(40)
    assert len(source.splitlines()) > 250 and source.count(b"torch.cuda.synchronize()") == 40
    scale = load_patch(patch_toml("scale", replace_step("out = torch.ops.vendor.stage_7(x, scale)\ntorch.cuda.synchronize()"
                                                        "\nreturn out", "out = torch.ops.vendor.stage_7(x, 2 * scale)\n"
                                                        "torch.cuda.synchronize()\nreturn out.float()"), scope="launch_7"))
    stream = load_patch(patch_toml("stream", replace_step("torch.cuda.synchronize()", "torch.cuda.current_stream().synchronize()"),
                                   scope="launch_7"))
    result = patch_source("kernels.py", source, [scale, stream])
    assert [(o.patch.id, o.status, o.detail) for o in result.outcomes] == [
        ("scale", Status.APPLIED, ""), ("stream", Status.APPLIED, "")]
    assert result.patched == source.replace(
        b"stage_7(x, scale)\n    torch.cuda.synchronize()\n    return out\n",
        b"stage_7(x, 2 * scale)\n    torch.cuda.current_stream().synchronize()\n    return out.float()\n")
