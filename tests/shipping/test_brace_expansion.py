"""Brace expansion: bash makes ``{a,b}`` and ``{1..3}`` into several words before any other expansion; dash does not.

The expected words below are what bash 5.2 prints for ``printf '%s\\n' WORD``.
A script run by bash copies every file a brace group names; under ``sh``
the base image's /bin/sh decides (dash keeps the braces, bash expands
them), so such a word is unknown there; under dash it is kept as written.
"""

from __future__ import annotations

import pytest

from patcher.shipping.brace_expansion import MAX_WORDS, TooManyWords, expand_braces
from patcher.shipping.shell_nodes import Simple
from patcher.shipping.shell_syntax import parse_script
from tests.shipping.conftest import image_of, plan_of, script_context


def words_of(text: str) -> list[str]:
    """The words bash's brace expansion makes of TEXT, written as a shell word, spelled out."""
    node = parse_script(f"printf '%s\\n' {text}\n").items[0].first.commands[0].node  # type: ignore[attr-defined]
    assert isinstance(node, Simple)
    spelled = ["".join(part.text for part in word) for word in expand_braces(node.words[2])]  # type: ignore[union-attr]
    return [word for word in spelled if word]  # an unquoted empty word is no word


@pytest.mark.parametrize(("text", "bash"), [
    ("{a,b}{1,2}", ["a1", "a2", "b1", "b2"]),
    ("x{a,{b,c}}y", ["xay", "xby", "xcy"]),
    ("pre/{a,b}/post{1..2}", ["pre/a/post1", "pre/a/post2", "pre/b/post1", "pre/b/post2"]),
    ("{1..10..3}", ["1", "4", "7", "10"]),
    ("{05..1..2}", ["05", "03", "01"]),
    ("{-05..5..5}", ["-05", "000", "005"]),
    ("{-3..3}", ["-3", "-2", "-1", "0", "1", "2", "3"]),
    ("{3..1}", ["3", "2", "1"]),
    ("{a..e..2}", ["a", "c", "e"]),
    ("{z..a..-2}", ["z", "x", "v", "t", "r", "p", "n", "l", "j", "h", "f", "d", "b"]),
    ("{a..c}{1..2}", ["a1", "a2", "b1", "b2", "c1", "c2"]),
    ("{,a}", ["a"]),
    ("a{,}b", ["ab", "ab"]),
    ("{a,\"b c\"}", ["a", "b c"]),
    ("{a\\,b,c}", ["a,b", "c"]),
    ("{{a,b}}", ["{a}", "{b}"]),
    ("}{a,b}{", ["}a{", "}b{"]),
    ("{{a,b}", ["{a", "{b"]),
    ("a}b{c,d}", ["a}bc", "a}bd"]),
    # No group: kept as written.
    ("{a}", ["{a}"]), ("{}", ["{}"]), ("{a..}", ["{a..}"]), ("{1..3", ["{1..3"]), ("{a,b", ["{a,b"]),
    ("\"{a,b}\"", ["{a,b}"]), ("'{'a,b}", ["{a,b}"]),
])
def test_words_are_expanded_as_bash_expands_them(text: str, bash: list[str]) -> None:
    assert words_of(text) == bash


@pytest.mark.parametrize("text", [
    # bash 5.2: a number past its 64-bit integers (a step's size too) leaves the sequence as written.
    "{1..3..9223372036854775808}", "{9223372036854775808..1}", "{-9223372036854775809..1}",
    "{1..3..-9223372036854775808}", "{a..e..9223372036854775808}", "{1..3..0" + "9" * 5000 + "}",
    "{1.." + "9" * 5000 + "}",
], ids=lambda text: text if len(text) < 40 else f"{text[:12]}...({len(text)} characters)")
def test_a_sequence_whose_numbers_do_not_fit_64_bits_stays_as_written(text: str) -> None:
    assert words_of(text) == [text]


def test_a_sequence_at_the_ends_of_64_bits_is_expanded() -> None:
    assert words_of("{9223372036854775807..9223372036854775806}") == ["9223372036854775807", "9223372036854775806"]
    assert words_of("{-9223372036854775808..-9223372036854775807}") == ["-9223372036854775808",
                                                                         "-9223372036854775807"]
    assert words_of("{1..3..9223372036854775807}") == ["1"]
    assert words_of("{a..e..9223372036854775807}") == ["a"]


def test_a_sequence_of_exactly_the_word_limit_is_built_and_one_more_is_not() -> None:
    # bash prints all 10000 words of {1..10000}; the reader builds a sequence up to MAX_WORDS words, not past it.
    assert words_of("{1..10000}") == [str(n) for n in range(1, MAX_WORDS + 1)]
    assert words_of("{10000..1}")[-1] == "1" and len(words_of("{0..19998..2}")) == MAX_WORDS
    with pytest.raises(TooManyWords):
        words_of("{0..10000}")


@pytest.mark.parametrize("text", ["{1..100000000}", "{a,b}" * 20, "{0..99}{0..99}{0..9}"])
def test_an_expansion_past_the_word_limit_is_not_built(text: str) -> None:
    with pytest.raises(TooManyWords):
        words_of(text)
    assert MAX_WORDS == 10_000


def test_a_bash_script_copies_every_file_a_brace_group_names() -> None:
    image = image_of(script_context("#!/bin/bash\nmkdir -p /made\ncp {x,sub/y}.py /made/\n"
                                    "for n in {1..2}; do cp x.py /made/x$n.py; done\n"))
    assert {path: source for path, source in image.items() if path.startswith("/made/")} == {
        "/made/x.py": "s/x.py", "/made/y.py": "s/sub/y.py", "/made/x1.py": "s/x.py", "/made/x2.py": "s/x.py"}


def test_under_sh_a_brace_group_is_the_base_images_shell_to_decide() -> None:
    plan = plan_of(script_context("#!/bin/sh\nmkdir -p /made\ncp {x,sub/y}.py /made/\n"))
    assert not any(path.startswith("/made/") for path in plan.image)
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]
    assert "{x,sub/y}.py" in plan.notes[0].reason


def test_dash_keeps_the_braces_as_written() -> None:
    plan = plan_of(script_context("#!/bin/dash\nmkdir -p /made\ncp {x,sub/y}.py /made/\n"))
    assert not any(path.startswith("/made/") for path in plan.image)
    assert [(n.kind, n.line) for n in plan.notes if n.file == "s/i.sh"] == [("fails", 3)]


def test_a_bash_expansion_past_the_limit_is_unread_not_built() -> None:
    plan = plan_of(script_context("#!/bin/bash\ncp x.py /made{1..100000000}\n"))
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]
