"""Property: the patches match on syntax, so re-formatting the vendor file changes nothing they do.

Hypothesis re-formats the shipped paged_attn.py without changing its
meaning (comments, blank lines, line breaks inside brackets, redundant
parentheses, trailing whitespace, CRLF) and checks that every patch still
applies, that the result has the same syntax tree as the patched original,
and that the code outside the patched functions keeps its bytes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE
from patcher.patchset import load_patch_set
from patcher.patchset.runner import Status, patch_source

ORIGINAL = (VENDOR_TREE / SHIPPED).read_bytes()
PATCH_SET = load_patch_set(PATCHES)
PATCHED_TREE = ast.dump(ast.parse(patch_source(SHIPPED, ORIGINAL, PATCH_SET.patches).patched))
PATCHED_SCOPES = {"forward_decode", "_forward_prefix_pytorch"}


@dataclass(frozen=True)
class Style:
    """Which meaning-preserving edits to make, and where (by visit order)."""

    comments: frozenset[int]
    blank_lines: frozenset[int]
    parentheses: frozenset[int]
    line_breaks: frozenset[int]
    trailing_spaces: frozenset[int]
    crlf: bool


class _Reformat(cst.CSTTransformer):
    def __init__(self, style: Style):
        super().__init__()
        self.style = style
        self.statements = 0
        self.expressions = 0
        self.calls = 0
        self.in_fstring = 0  # line breaks are not allowed inside f-string fields before 3.12

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.in_fstring += 1

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        self.in_fstring -= 1
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        index = self.statements
        self.statements += 1
        lines = list(updated.leading_lines)
        if index in self.style.blank_lines:
            lines.append(cst.EmptyLine())
        if index in self.style.comments:
            lines.append(cst.EmptyLine(comment=cst.Comment(f"# note {index}: (x) = [1, 2]  # not code")))
        trailing = updated.trailing_whitespace
        if index in self.style.trailing_spaces and trailing.comment is None:
            trailing = trailing.with_changes(whitespace=cst.SimpleWhitespace("   "))
        return updated.with_changes(leading_lines=lines, trailing_whitespace=trailing)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        index = self.expressions
        self.expressions += 1
        value = updated.value
        if index in self.style.parentheses and not updated.star:
            value = value.with_changes(lpar=[cst.LeftParen(), *value.lpar], rpar=[*value.rpar, cst.RightParen()])
        return updated.with_changes(value=value)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        index = self.calls
        self.calls += 1
        if index not in self.style.line_breaks or not updated.args or self.in_fstring:
            return updated
        broken = cst.ParenthesizedWhitespace(
            first_line=cst.TrailingWhitespace(), indent=True, last_line=cst.SimpleWhitespace("        ")
        )
        return updated.with_changes(whitespace_before_args=broken)


def _reformat(style: Style) -> bytes:
    module = cst.parse_module(ORIGINAL).visit(_Reformat(style))
    if style.crlf:
        module = module.with_changes(default_newline="\r\n")
    return module.bytes


def _outside_patched_scopes(source: bytes) -> list[str]:
    """The code of every definition the patches do not touch."""
    module = cst.parse_module(source)
    kept = [module.code_for_node(s) for s in module.body if not isinstance(s, cst.ClassDef)]
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef) and member.name.value not in PATCHED_SCOPES:
                    kept.append(module.code_for_node(member))
    return kept


indices = st.frozensets(st.integers(min_value=0, max_value=400), max_size=40)
styles = st.builds(Style, indices, indices, indices, indices, indices, st.booleans())


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(styles)
def test_reformatted_vendor_file_patches_to_the_same_tree(style: Style) -> None:
    source = _reformat(style)
    assert ast.dump(ast.parse(source)) == ast.dump(ast.parse(ORIGINAL))  # the re-format kept the meaning
    result = patch_source(SHIPPED, source, PATCH_SET.patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3, [o.detail for o in result.outcomes]
    assert ast.dump(ast.parse(result.patched)) == PATCHED_TREE
    assert _outside_patched_scopes(result.patched) == _outside_patched_scopes(source)
    again = patch_source(SHIPPED, result.patched, PATCH_SET.patches)
    assert [o.status for o in again.outcomes] == [Status.ALREADY_APPLIED] * 3
