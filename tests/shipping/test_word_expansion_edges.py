"""Edges of word expansion: field splitting under a set IFS, parameter forms bash alone reads, and which
``**`` is globstar's.

Every expectation was checked with bash 5.2 and dash 0.5.12 (``IFS=...; set -f; for x in $V``).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script
from tests.shipping.test_word_expansion import Scope, fields, one

# (IFS, value, the fields an unquoted $V splits into) -- bash and dash agree on each.
IFS_SPLITS = [
    (' ,', 'a , b', ['a', 'b']),
    (' ,', 'a b', ['a', 'b']),
    (' ,', 'a,b', ['a', 'b']),
    (' ,', 'aXXb', ['aXXb']),
    (' ,', 'aXb c', ['aXb', 'c']),
    (' ,', 'aXb,c:d', ['aXb', 'c:d']),
    (' ,', 'x]y', ['x]y']),
    (' ,', 'XaXXb', ['XaXXb']),
    (' ,', 'a\tb', ['a\tb']),
    (',', 'a , b', ['a ', ' b']),
    (',', 'a b', ['a b']),
    (',', 'a,b', ['a', 'b']),
    (',', 'aXXb', ['aXXb']),
    (',', 'aXb c', ['aXb c']),
    (',', 'aXb,c:d', ['aXb', 'c:d']),
    (',', 'x]y', ['x]y']),
    (',', 'XaXXb', ['XaXXb']),
    (',', 'a\tb', ['a\tb']),
    ('X', 'a , b', ['a , b']),
    ('X', 'a b', ['a b']),
    ('X', 'a,b', ['a,b']),
    ('X', 'aXXb', ['a', '', 'b']),
    ('X', 'aXb c', ['a', 'b c']),
    ('X', 'aXb,c:d', ['a', 'b,c:d']),
    ('X', 'x]y', ['x]y']),
    ('X', 'XaXXb', ['', 'a', '', 'b']),
    ('X', 'a\tb', ['a\tb']),
    (' \t', 'a , b', ['a', ',', 'b']),
    (' \t', 'a b', ['a', 'b']),
    (' \t', 'a,b', ['a,b']),
    (' \t', 'aXXb', ['aXXb']),
    (' \t', 'aXb c', ['aXb', 'c']),
    (' \t', 'aXb,c:d', ['aXb,c:d']),
    (' \t', 'x]y', ['x]y']),
    (' \t', 'XaXXb', ['XaXXb']),
    (' \t', 'a\tb', ['a', 'b']),
    (',:', 'a , b', ['a ', ' b']),
    (',:', 'a b', ['a b']),
    (',:', 'a,b', ['a', 'b']),
    (',:', 'aXXb', ['aXXb']),
    (',:', 'aXb c', ['aXb c']),
    (',:', 'aXb,c:d', ['aXb', 'c', 'd']),
    (',:', 'x]y', ['x]y']),
    (',:', 'XaXXb', ['XaXXb']),
    (',:', 'a\tb', ['a\tb']),
]


@pytest.mark.parametrize(("ifs", "value", "expected"), IFS_SPLITS)
def test_unquoted_value_splits_on_the_ifs_a_script_sets(ifs: str, value: str, expected: list[str]) -> None:
    assert [f for f, _ in fields("$V", Scope({"IFS": ifs, "V": value}))] == expected


def test_a_bracket_is_no_separator_under_the_default_ifs() -> None:
    assert [f for f, _ in fields("$V", Scope({"V": "x]y"}))] == ["x]y"]


def test_a_value_split_by_an_unknown_ifs_stays_one_field_with_the_text_after_it() -> None:
    scope = Scope({"V": "a"})
    scope.variables["IFS"] = scope.unknowns.mark("$IFS")
    assert len(fields("${V}x", scope)) == 1


class ArrayScope(Scope):
    """A scope with bash arrays, that keeps the spellings it was told only bash reads."""

    def __init__(self, variables: dict[str, str] | None = None, arrays: dict[str, list[str]] | None = None) -> None:
        super().__init__(variables)
        self.arrays = dict(arrays or {})
        self.bash_forms: list[str] = []

    def elements(self, name: str) -> list[str] | None:
        return self.arrays.get(name)

    def bash_only(self, spelled: str) -> None:
        self.bash_forms.append(spelled)


@pytest.mark.parametrize(("text", "expected"), [
    ("${#A[*]}", "2"), ("${#A[@]}", "2"), ("${#U[@]}", "${#U[@]}"),
    ("${A[@]#x}", "${A[@]#...}"), ("${A[*]#x}", "${A[*]#...}"),
    ("${!N}", "${!N}"), ("${!B}", "${!B}"), ("${!R}", "x"),
    ("${!P*}", "${!P*}"),
    ("${F#$P}", "b"), ("${F:$I}", "b"),
])
def test_bash_parameter_forms_expand_as_bash_does_or_stay_as_written(text: str, expected: str) -> None:
    scope = ArrayScope({"F": "a/b", "P": "a/", "I": "2", "B": "a b", "R": "F2", "F2": "x"}, {"A": ["x", "yy"]})
    assert one(text, scope) == expected


@pytest.mark.parametrize(("text", "spelled"), [
    ("${!R}", "${!R}"), ("${!P*}", "${!P*}"), ("${!A[@]}", "${!A[@]}"), ("${#A[@]}", "${#A[@]}"),
    ("${A[0]}", "${A[0]}"), ("${F:1}", "${F:...}"),
])
def test_a_bash_only_form_is_named_as_the_script_spells_it(text: str, spelled: str) -> None:
    scope = ArrayScope({"F": "a/b", "R": "F"}, {"A": ["x", "yy"]})
    one(text, scope)
    assert scope.bash_forms == [spelled]


@pytest.mark.parametrize("pattern", ['sub/*"*"/y.py', "sub/*\\*/y.py", '*"*"/y.py'])
def test_a_double_star_with_its_second_star_quoted_is_no_globstar(pattern: str) -> None:
    """bash 5.2 under globstar: 'sub/*"*"/y.py' names a folder whose name ends in '*', so it matches nothing
    (sub/y.py is not found) and cp fails on the word as written."""
    plan = run_script(f"shopt -s globstar\ncp {pattern} /dest/ || cp x.py /dest/none.py\n")
    assert in_dest(plan) == ["/dest/none.py"]
