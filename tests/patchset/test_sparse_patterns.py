"""What a sparse parse finds in a vendor file: logical lines, statements, which ones it keeps, and the text it gives back.

These pin the scanner and the skeleton on small texts (comments, CRLF,
strings over lines, clauses, one-member classes) and the round trip of a
sparse parse of the shipped file with mixed newlines and odd indentation.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.patchset import sparse
from patcher.patchset.sparse import (_Search, _Skeleton, _Splitter, _Unfollowed, _any_within, _filled, _names,
                                     _newline, _pattern_search, logical_lines, parse_sparse)
from patcher.transforms.pattern import Pattern
from tests.patchset.conftest import shipped_patches, vendor_file_with_helpers


def _spans(text: str) -> list[tuple[int, int, int]]:
    return [(line.start, line.code, line.end) for line in logical_lines(text)]


def test_a_string_over_lines_that_ends_the_file_without_a_newline_is_one_line() -> None:
    text = 'x = """a\nb"""'
    assert _spans(text) == [(0, 0, len(text))]


def test_a_nul_in_the_file_is_not_followed() -> None:
    with pytest.raises(_Unfollowed):
        logical_lines("x = 1\0\n")


@pytest.mark.parametrize("text, end, newline", [
    ("x\r\ny", 3, "\r\n"),
    ("\r\n", 2, "\r\n"),
    ("\n", 1, "\n"),
    ("x\ny", 2, "\n"),
    ("x\ny", 3, ""),
    ("ab\r\n\n", 4, "\r\n"),
])
def test_the_newline_before_an_offset(text: str, end: int, newline: str) -> None:
    assert _newline(text, end) == newline


def test_a_name_that_starts_where_a_statement_ends_is_not_in_it() -> None:
    assert not _any_within([6], 0, 6)
    assert _any_within([5], 0, 6)


def _units(text: str, searches: list[_Search] | None = None) -> tuple[_Splitter, list]:
    splitter = _Splitter(text, searches or [])
    return splitter, splitter.units(logical_lines(text))


def test_an_else_clause_belongs_to_the_statement_before_it() -> None:
    text = "x = 1\nif a:\n    pass\nelse:\n    pass\n"
    _, units = _units(text)
    assert [(u.start, u.end) for u in units] == [(0, 6), (6, len(text))]


def test_a_line_indented_otherwise_than_its_block_is_not_followed() -> None:
    with pytest.raises(_Unfollowed, match="^an indentation the block does not have$"):
        _units("  a = 1\n\tb = 2\n")


def test_a_decorator_with_nothing_after_it_is_not_followed() -> None:
    with pytest.raises(_Unfollowed, match="^a decorator with nothing to decorate$"):
        _units("x = 1\n@d\n")


@pytest.mark.parametrize("code, anything", [("$X", True), ("$...BODY", True), ("x = 1\n$X", True)])
def test_a_statement_wide_metavariable_searches_anything_in_its_scope(code: str, anything: bool) -> None:
    assert _pattern_search("C.f", Pattern.parse(code)) == _Search(("C", "f"), (), anything=True)


def test_a_pattern_names_what_a_match_must_spell() -> None:
    assert _pattern_search("C.f", Pattern.parse("y = g(z)")) == _Search(("C", "f"), (frozenset({"y", "g", "z"}),))
    assert _names(Pattern.parse("f($...ARGS, $A)").statements[0]) == frozenset({"f"})


def test_a_search_for_anything_keeps_every_member_of_its_class() -> None:
    text = "class C:\n    a = 1\n    b = 2\nz = 3\n"
    splitter, units = _units(text, [_Search(("C",), (), anything=True)])
    splitter.decide(units, ())
    assert [u.keep for u in units] == [True, False]
    assert units[0].members is None


def test_a_class_a_search_matches_whole_is_not_split() -> None:
    text = "class C:\n    class D:\n        y = 1\n        w = 2\n    v = 0\n"
    searches = [_Search(("C",), (frozenset({"y"}),)), _Search(("C", "D"), (frozenset({"zzz"}),))]
    splitter, units = _units(text, searches)
    splitter.decide(units, ())
    members = units[0].members
    assert members is not None and [m.keep for m in members] == [True, False]
    assert members[0].members is None


def test_a_function_on_a_scope_path_is_kept_whole() -> None:
    text = "def C():\n    a = 1\n    b = 2\n"
    splitter, units = _units(text, [_Search(("C", "x"), (frozenset({"q"}),))])
    splitter.decide(units, ())
    assert units[0].keep and units[0].members is None


def test_a_class_with_one_opaque_member_lays_a_placeholder_for_it() -> None:
    text = "class C:\n    def g():\n        pass\n"
    splitter, units = _units(text, [_Search(("C", "f"), (frozenset({"q"}),))])
    splitter.decide(units, ())
    skeleton = _Skeleton(text, "t", "    ", text.index("    def"))
    skeleton.lay(units, 0, len(text))
    assert "".join(skeleton.parts) == "class C:\n    if __patcher_opaque_t_0__:\n        pass\n"


def test_an_opaque_statement_compiles_without_the_next_one() -> None:
    text = "a = 1\nb = 2\n"
    splitter, units = _units(text, [_Search(("b", "x"), (frozenset({"q"}),))])
    splitter.decide(units, ())
    skeleton = _Skeleton(text, "t", "", -1)
    skeleton.lay(units, 0, len(text))
    assert skeleton.chunks == [("", "a = 1\n")]
    assert "".join(skeleton.parts) == "__patcher_opaque_t_0__\nb = 2\n"


@pytest.mark.parametrize("code", ["class C: x = 1\n", "pass\n", "x = y\n", "class C:\n    pass\n"])
def test_statements_without_placeholders_are_filled_as_they_are(code: str) -> None:
    body = cst.parse_module(code).body
    out = _filled(body, {}, code)
    assert len(out) == len(body) and all(a is b for a, b in zip(out, body))


def _round_trip(text: str, monkeypatch: pytest.MonkeyPatch, patch_set) -> str:
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    module = parse_sparse(text.encode(), shipped_patches(patch_set))
    assert module is not None and any(isinstance(s, sparse.Opaque) for s in module.body)
    return module.code


@pytest.mark.parametrize("tail", [
    "z = 1\r\nw = 2\r\n",                            # CRLF statements in an LF file
    "def _two():\n  x = 1\n  # the block's own comment\n",  # a block indented otherwise than the module
    "if _flag:\n  x = 1\nelse:\n   y = 2\n   # deeper than the module\n",
])
def test_a_sparse_parse_gives_back_the_file_byte_for_byte(tail: str, patch_set, monkeypatch: pytest.MonkeyPatch) -> None:
    text = vendor_file_with_helpers("lf") + tail
    assert _round_trip(text, monkeypatch, patch_set) == text


def test_a_file_exactly_at_the_threshold_is_parsed_sparsely(patch_set, monkeypatch: pytest.MonkeyPatch) -> None:
    source = vendor_file_with_helpers("lf").encode()
    monkeypatch.setattr(sparse, "SPARSE_FROM", len(source))
    assert parse_sparse(source, shipped_patches(patch_set)) is not None
    monkeypatch.setattr(sparse, "SPARSE_FROM", len(source) + 1)
    assert parse_sparse(source, shipped_patches(patch_set)) is None


def test_a_file_that_spells_a_placeholder_name_keeps_its_own_code(patch_set, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(sparse.secrets, "token_hex", lambda n: next(drawn))
    text = (vendor_file_with_helpers("lf") + "# __patcher_opaque_aaaaaaaa_0__\n"
            + "if __patcher_opaque_None_0__:\n    PagedAttention = PagedAttention\n")
    assert _round_trip(text, monkeypatch, patch_set) == text
