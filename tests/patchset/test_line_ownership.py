"""Which patch wrote which line, in files of any size: the same answers as difflib, in near-linear time.

The series runner blames a patch that rewrites lines another patch wrote
(``_LineOwners``); it follows each line through a diff of every version of
the file against the one before. difflib with ``autojunk`` off (a line
repeated all over a file must still be matched) is quadratic on the blank
lines, ``return`` and ``)`` a large vendor file repeats thousands of times:
a 1 MB target took minutes. ``patcher.linediff`` gives difflib's opcodes on
small inputs and cuts large ones at their common prefix and suffix and at
lines unique to both sides.
"""

from __future__ import annotations

import difflib
import textwrap
from typing import Any, Callable, Hashable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from patcher.linediff import SMALL, grouped, opcodes
from patcher.patchset.runner import Status, _LineOwners, patch_source

from tests.fixtures_work import traced_lines

CLASH = "rewrites code that patch {} wrote (line {}); two patches must not rewrite the same code: " \
        "merge them or reorder the series"


def _validator(number: int) -> list[str]:
    """One of the diagnostic versions' block-table checks: most of its lines repeat in every copy."""
    return [
        f"def _check_{number}(block_tables, num_blocks):",
        '    """Raise if a block id points outside the cache."""',
        "    if block_tables is None or block_tables.numel() == 0:",
        "        return",
        "    low = int(block_tables.min().item())",
        "    high = int(block_tables.max().item())",
        "    if low < 0 or high >= num_blocks:",
        '        raise RuntimeError("[paged_attn pid=%d] out of range" % os.getpid())',
        "    return",
        "",
        "",
    ]


def diagnostics_module(helpers: int, *, crlf: bool = True) -> str:
    """A vendor-shaped module: two functions a patch edits, between runs of HELPERS near-identical checks."""
    lines = ['"""Paged attention diagnostics (BI-V100 bring-up)."""', "import os", "", ""]
    for number in range(helpers):
        lines += _validator(number)
    lines += ["def forward_decode(query, seq_lens):", "    scale = 1.0", "    tile = 64", "    out = query * scale",
              "    return out", "", ""]
    for number in range(helpers, 2 * helpers):
        lines += _validator(number)
    lines += ["def forward_prefix(query, key):", "    scale = 1.0", "    out = query @ key.T",
              "    return out * scale", ""]
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if crlf else text


def _patch(load_patch: Callable[[str], Any], patch_id: str, scope: str, pattern: str, code: str) -> Any:
    return load_patch(textwrap.dedent(f'''
        id = "{patch_id}"
        description = "An edit"
        origin = "test"
        last-update = "2026-12-01"
        target = "x.py"
        scope = "{scope}"

        [[steps]]
        op = "replace"
        pattern = "{pattern}"
        code = "{code}"
    '''))


def _line_of(text: bytes, line: bytes) -> int:
    return text.split(b"\n").index(line) + 1


# --- the runner: clashes found and named in a large file -------------------------------------


def test_a_rewrite_of_another_patchs_line_in_a_large_file_names_that_patch_and_line(load_patch: Any) -> None:
    source = diagnostics_module(150).encode()
    assert source.count(b"\r\n") > 3000 and source.count(b"        return\r\n") == 300
    tune = _patch(load_patch, "tune", "forward_decode", "tile = 64", "tile = 128")
    again = _patch(load_patch, "again", "forward_decode", "tile = 128", "tile = 256")
    result = patch_source("x.py", source, [tune, again])
    assert [(o.patch.id, o.status, o.detail) for o in result.outcomes] == [
        ("tune", Status.APPLIED, ""),
        ("again", Status.FAILED, CLASH.format("tune", _line_of(source, b"    tile = 64\r"))),
    ]
    assert result.patched == source.replace(b"tile = 64", b"tile = 128")


def test_a_patchs_line_moved_by_a_far_edit_is_still_its_own_at_its_new_line(load_patch: Any) -> None:
    # 'grow' writes three lines into forward_prefix, at the end of the file;
    # 'tune' rewrites a line in forward_decode, in the middle; 'lead' then
    # adds a line at the top of forward_decode, moving tune's line down;
    # 'again' rewrites tune's line: the clash names tune at its new line.
    source = diagnostics_module(150).encode()
    patches = [
        _patch(load_patch, "grow", "forward_prefix", "out = query @ key.T", "out = query @ key.T\\nout = out.float()"),
        _patch(load_patch, "tune", "forward_decode", "tile = 64", "tile = 128"),
        _patch(load_patch, "lead", "forward_decode", "scale = 1.0", "scale = 1.0\\nbias = 0.0"),
        _patch(load_patch, "again", "forward_decode", "tile = 128", "tile = 256"),
    ]
    result = patch_source("x.py", source, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3 + [Status.FAILED]
    moved = _line_of(source, b"    tile = 64\r") + 1
    assert result.outcomes[3].detail == CLASH.format("tune", moved)
    assert result.patched.split(b"\r\n")[moved - 1] == b"    tile = 128"


def test_edits_far_apart_in_a_large_file_by_three_patches_all_apply(load_patch: Any) -> None:
    source = diagnostics_module(150).encode()
    patches = [_patch(load_patch, "decode", "forward_decode", "tile = 64", "tile = 128"),
               _patch(load_patch, "prefix", "forward_prefix", "scale = 1.0", "scale = 0.5"),
               _patch(load_patch, "check", "_check_3", "high = int(block_tables.max().item())",
                      "high = int(block_tables.amax().item())")]
    result = patch_source("x.py", source, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3
    lines = source.split(b"\r\n")
    lines[lines.index(b"    tile = 64")] = b"    tile = 128"
    lines[lines.index(b"def forward_prefix(query, key):") + 1] = b"    scale = 0.5"
    lines[lines.index(b"def _check_3(block_tables, num_blocks):") + 5] = b"    high = int(block_tables.amax().item())"
    assert result.patched == b"\r\n".join(lines)


# --- the diff itself --------------------------------------------------------------------------


def _valid(a: Sequence[Hashable], b: Sequence[Hashable], codes: list[tuple[str, int, int, int, int]]) -> None:
    """Assert the opcodes cover both sides in order, say 'equal' only of equal runs, and never repeat a tag."""
    i = j = 0
    previous = None
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j) and (i1, j1) != (i2, j2)
        assert tag != previous
        if tag == "equal":
            assert list(a[i1:i2]) == list(b[j1:j2])
        else:
            assert tag == {(True, False): "delete", (False, True): "insert"}.get((i1 < i2, j1 < j2), "replace")
        i, j, previous = i2, j2, tag
    assert (i, j) == (len(a), len(b))


small_lines = st.lists(st.integers(0, 6), max_size=150)


@settings(max_examples=300, deadline=None)
@given(small_lines, small_lines)
def test_small_inputs_get_difflibs_own_opcodes(a: list[int], b: list[int]) -> None:
    if len(a) * len(b) <= SMALL:
        assert opcodes(a, b) == difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


edits = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 8), st.lists(st.integers(0, 400), max_size=8)),
                 max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=250, max_size=900), edits)
def test_large_inputs_get_a_valid_diff_keeping_what_difflib_keeps(a: list[int], changes: list[Any]) -> None:
    b = list(a)
    for at, cut, new in changes:
        at %= len(b) + 1
        b[at : at + cut] = new
    codes = opcodes(a, b)
    _valid(a, b, codes)
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag == "equal")
    theirs = sum(size for *_, size in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    # An edit script of a few hunks: close to difflib's (neither is minimal).
    assert kept >= theirs - 2 * sum(len(new) + cut for _, cut, new in changes) - 2


def test_a_piece_where_every_line_repeats_is_still_diffed_line_by_line() -> None:
    # Three distinct lines, 3,000 times over, edited in two places far apart:
    # no line is unique anywhere, so the rarest line's places cut it.
    a = ["", "    return", ")"] * 3000
    b = a[:1000] + ["x = 1"] + a[1000:8000] + a[8001:]
    codes = opcodes(a, b)
    _valid(a, b, codes)
    assert sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag != "equal") <= 10


@settings(max_examples=200, deadline=None)
@given(small_lines, small_lines, st.integers(0, 4))
def test_hunks_group_as_difflib_groups_them(a: list[int], b: list[int], context: int) -> None:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    assert list(grouped(matcher.get_opcodes(), context)) == list(matcher.get_grouped_opcodes(context))


def test_doubling_a_file_at_most_doubles_the_work_of_diffing_it() -> None:
    # difflib's work quadruples here (2.8 million traced lines for 3,600
    # lines of this file, 11.3 million for 7,200).
    def work(helpers: int) -> int:
        old = diagnostics_module(helpers, crlf=False).split("\n")
        new = list(old)
        new[20:21] = ["        return None"]
        new[len(new) // 2 : len(new) // 2] = ["x = 1"]
        new[-3:-2] = ["    return out"]
        assert len(old) * len(new) > SMALL
        return traced_lines(lambda: opcodes(old, new))

    assert work(400) <= 2.2 * work(200)
    assert work(800) <= 2.2 * work(400)


def test_doubling_a_file_at_most_doubles_the_work_of_following_its_lines() -> None:
    # Three patches, each edit of the series' versions followed as the runner
    # follows them; the second rewrites nothing of the first's.
    def work(helpers: int) -> int:
        first = diagnostics_module(helpers)
        second = first.replace("    tile = 64", "    tile = 128")
        third = second.replace('"""Paged attention diagnostics', '"""Paged attention diagnostics, patched')
        owners = _LineOwners()
        return traced_lines(lambda: [owners.claim("tune", first, second), owners.claim("doc", second, third)])

    assert work(400) <= 2.2 * work(200)
