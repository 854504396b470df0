"""What ``tr`` prints from a known text: sets, ranges, classes, escapes, ``-d``/``-s``/``-t``/``-c``.

Each row's output is what GNU coreutils 9.1 ``tr`` printed for the same
arguments on the same text (C locale). ``None``: the reader does not follow
it (a complement, an equivalence class ``[=c=]``, a byte past ASCII, an
unknown input), so what it prints stays unknown.
"""

from __future__ import annotations

import pytest

from patcher.shipping.text_filters import Filtered, filter_text
from tests.shipping.conftest import in_dest, notes, run_script

TR_PRINTS = [
    # sets: classes, ranges and literal characters, in any order
    (["-d", "a[:digit:]"], "ab1]", "b]"),
    (["-d", "ab"], "aXb", "X"),
    (["[]", "()"], "[x]", "(x)"),  # a bracket that opens no class is itself
    (["a-a", "b"], "aa", "bb"),  # a range may end where it starts
    (["-d", "xa-c"], "x-yb", "-y"),
    (["-d", "a-cx"], "bxy", "y"),  # what follows a range is read too
    (["", "x"], "XY", "XY"),  # an empty set1 translates nothing
    (["-d", ""], "XY", "XY"),
    # escapes: octal, the C escapes, any other escaped character, a backslash at the end
    (["\\101", "b"], "aA", "ab"),
    (["\\n", " "], "a\nb\n", "a b "),
    (["a\\-", "b_"], "a-d", "b_d"),
    (["-d", "\\"], "a\\b", "ab"),
    # options come first; "--" ends them, and a set after it may start with "-"
    (["--", "-d", "xy"], "a-d", "axy"),
    (["--", "a", "b"], "ab", "bb"),
    (["-d", "--", "a"], "ab", "b"),
    (["--squeeze-repeats", "a"], "aab", "ab"),
    (["--truncate-set1", "abc", "xy"], "abc", "xyc"),
    (["abc", "xy"], "abc", "xyy"),  # without -t set2 is stretched by its last character
    # not followed: the output stays unknown
    (["--complement", "a", "b"], "ab", None),
    (["-C", "a", "b"], "ab", None),
    (["-c", "a", "b"], "ab", None),
    (["-d", "a[=b=]"], "ab", None),
    (["a", "\\200"], "a", None),  # tr prints the byte 0x80, no character of a text
    (["a", "b"], "é", None),
]


UNWORKED = "a path that depends on a value the reader cannot work out"


@pytest.mark.parametrize(("args", "text", "printed"), TR_PRINTS)
def test_tr_prints_what_coreutils_prints(args: list[str], text: str, printed: str | None) -> None:
    assert filter_text("tr", args, lambda operand: text if operand == "-" else None).text == printed


def test_tr_of_unknown_text_prints_unknown_text() -> None:
    assert filter_text("tr", ["a", "b"], lambda operand: None).text is None


@pytest.mark.parametrize(("script", "placed"), [
    ("v=$(printf 'x-y' | tr -- - _)\ncp x.py \"/dest/$v.py\"\n", ["/dest/x_y.py"]),
    ("v=$(printf 'a1b22' | tr -d '[:digit:]')\ncp x.py \"/dest/$v.py\"\n", ["/dest/ab.py"]),
    ("v=$(printf 'AB' | tr '\\101' x)\ncp x.py \"/dest/$v.py\"\n", ["/dest/xB.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_path_named_by_tr_of_known_text_is_known(script: str, placed: list[str], shell: str) -> None:
    plan = run_script(script, f"{shell} i.sh")
    assert in_dest(plan) == placed and plan.notes == ()


# GNU tr 9.1 in the C locale: an octal escape past \377 is two digits and a character ('\400' is ' ' then '0'),
# an escape ends a range as it starts one, and -ds takes two sets ("missing operand" with one: status 1).
@pytest.mark.parametrize(("args", "text", "printed", "ok"), [
    (["-d", "\\400"], " 0x", "x", True),
    (["-d", "\\777"], "?7x", "x", True),
    (["\\60-\\62", "x"], "0123", "xxx3", True),
    (["a-c", "\\101-\\103"], "abcd", "ABCd", True),
    (["-ds", "a"], "aab", "", False),
    (["-ds", "a", "b"], "aabbc", "bc", True),
])
def test_tr_reads_escapes_ranges_and_operands_as_gnu_tr(args: list[str], text: str, printed: str, ok: bool) -> None:
    assert filter_text("tr", args, lambda operand: text if operand == "-" else None) == Filtered(printed, ok)


# tr with an option it does not know: its output is unknown, its status left to the image (checked under bash
# 5.2.15 and dash 0.5.12 with GNU coreutils 9.1).
def test_tr_with_an_option_it_does_not_know_prints_what_the_reader_cannot_say() -> None:
    # GNU tr: "invalid option -- 'x'", nothing on standard output (/dest/v).
    plan = run_script('V=$(tr -x a b <<< abc)\ncp x.py "/dest/v$V"\n')
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 2, 'cp x.py "/dest/v$V"', f"cp /dest/v$(tr -x a b <<< abc): {UNWORKED}")]
