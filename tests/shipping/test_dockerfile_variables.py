"""Dockerfile words are processed as BuildKit's lexer processes them (``shell/lex.go``, ``ProcessWord``).

Quotes are removed (single quotes keep ``$``; inside double quotes the
escape only takes ``"``, ``$`` and itself), variables substituted with every
modifier BuildKit knows, an unset variable given to ``missing`` (empty, or
a marker when only the base image could set it). ``ENV`` takes ``a=b c=d``
pairs or the old ``ENV key value`` form.
"""

from __future__ import annotations

import pytest

from patcher.shipping.docker_syntax import DockerLexer, env_pairs

VALUES = {"A": "a b", "E": "", "F": "a/b/c.tar.gz", "G": "foo"}
LEXER = DockerLexer(VALUES.get, lambda name: f"<{name}?>")


@pytest.mark.parametrize(("text", "word"), [
    ("$A", "a b"), ("${A}", "a b"), ("$A$G", "a bfoo"), ("x${G}y", "xfooy"), ("${N}", "<N?>"), ("$N", "<N?>"),
    ("$", "$"), ("$ x", "$ x"), ("a$", "a$"), ("\\$A", "$A"), ("'$A'", "$A"), ("\"$A\"", "a b"),
    ("\"a\\\"b\"", 'a"b'), ("\"a\\$b\"", "a$b"), ("\"a\\\\b\"", "a\\b"), ("\"a\\xb\"", "a\\xb"), ("\"${G}\"", "foo"),
    ("a\\ b", "a b"), ("a\\", "a"), ("'a\\b'", "a\\b"), ("''\"\"", ""),
    ("${A:-d}", "a b"), ("${E:-d}", "d"), ("${N:-d}", "d"), ("${A-d}", "a b"), ("${E-d}", ""), ("${N-d}", "d"),
    ("${A:+d}", "d"), ("${E:+d}", ""), ("${N:+d}", ""), ("${A+d}", "d"), ("${E+d}", "d"), ("${N+d}", ""),
    ("${A:?m}", "a b"), ("${A?m}", "a b"), ("${E?m}", ""),
    ("${F#*/}", "b/c.tar.gz"), ("${F##*/}", "c.tar.gz"), ("${F%.*}", "a/b/c.tar"), ("${F%%.*}", "a/b/c"),
    ("${F#x}", "a/b/c.tar.gz"), ("${F%x}", "a/b/c.tar.gz"), ("${F#}", "a/b/c.tar.gz"), ("${F%%}", "a/b/c.tar.gz"),
    ("${F#a/b/c.tar.gz}", ""), ("${F%%*}", ""), ("${F##*}", ""), ("${F:#x}", "a/b/c.tar.gz"), ("${N#x}", ""),
    ("${G/o/0}", "f0o"), ("${G//o/0}", "f00"), ("${G/x/y}", "foo"), ("${N/o/0}", ""), ("${G//o/}", "f"),
    ("${A:-$G}", "a b"), ("${N:-$G/x}", "foo/x"), ("${N:-\"q r\"}", "q r"), ("${N:-'x'}", "x"),
    ("${N:-a\\}b}", "a}b"), ("${N:+$G}", ""), ("${A:+${G}!}", "foo!"),
    ("${1}", "<1?>"), ("$1", "<1?>"), ("$12", "<12?>"), ("${@}", "<@?>"), ("$@a", "<@?>a"), ("${A_1}", "<A_1?>"),
    ("$A_B", "<A_B?>"), ("${#}", "<#?>"), ("$$", "<$?>"),
])
def test_a_word_is_substituted_as_buildkit_does(text: str, word: str) -> None:
    assert LEXER.word(text) == word


@pytest.mark.parametrize(("text", "error"), [
    ("${N:?}", "N: is not allowed to be unset"),
    ("${N?}", "N: is not allowed to be unset"),
    ("${E:?must be set}", "E: must be set"),
    ("${N?gone}", "N: gone"),
    ("${", "syntax error: bad substitution"),
    ("${}", "syntax error: bad substitution"),
    ("${:}", "syntax error: bad substitution"),
    ("${{A}}", "syntax error: bad substitution"),
    ("${A", "syntax error: missing '}'"),
    ("${A:", "unsupported modifier (:) in substitution"),
    ("${A:x}", "unsupported modifier (:x) in substitution"),
    ("${A^^}", "unsupported modifier (^) in substitution"),
    ("${A:/x/y}", "unsupported modifier (:/) in substitution"),
    ("'abc", "unexpected end of statement while looking for matching single-quote"),
    ('"abc', "unexpected end of statement while looking for matching double-quote"),
    ('"abc\\"', "unexpected end of statement while looking for matching double-quote"),
    ("${A:-x", "unexpected end of statement while looking for matching }"),
    ("${G/o/0", "unexpected end of statement while looking for matching }"),
    ("${G/o}", "unexpected end of statement while looking for matching /"),
    ("${A#*", "unexpected end of statement while looking for matching }"),
])
def test_a_word_buildkit_refuses_is_refused_with_its_message(text: str, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        LEXER.word(text)
    assert str(raised.value) == error


@pytest.mark.parametrize(("text", "pairs"), [
    ("A=1 B=\"x y\" C='z w' D=$A", [("A", "1"), ("B", "x y"), ("C", "z w"), ("D", "a b")]),
    ("NAME value with  blanks", [("NAME", "value with  blanks")]),
    ("K  v  ", [("K", "v")]),
    ("A=a\\ b", [("A", "a b")]),
    ("A=\"$A\" B=${A:-x}", [("A", "a b"), ("B", "a b")]),  # each value read with the values from before the line
    ("A=", [("A", "")]),
    ("A=\"x=y z\"", [("A", "x=y z")]),
    ("A=1\tB=2", [("A", "1"), ("B", "2")]),
    ("A='it\"s' B=\"it's\"", [("A", 'it"s'), ("B", "it's")]),
])
def test_env_takes_pairs_or_the_old_key_value_form(text: str, pairs: list[tuple[str, str]]) -> None:
    assert env_pairs(text, LEXER) == pairs


@pytest.mark.parametrize(("text", "error"), [
    ("A=1 =2", "'=2' is not NAME=VALUE"),
    ("A=1 B", "'B' is not NAME=VALUE"),
    ("A=\"q", "unexpected end of statement while looking for matching double-quote"),
])
def test_env_pairs_docker_refuses_are_refused(text: str, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        env_pairs(text, LEXER)
    assert str(raised.value) == error


@pytest.mark.parametrize(("text", "word"), [("${X}", "<X?>"), ("${XY:-d}", "d"), ("${G}X", "fooX")])
def test_a_braced_name_of_any_letter_is_substituted(text: str, word: str) -> None:
    assert LEXER.word(text) == word
