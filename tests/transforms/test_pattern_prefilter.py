"""The statement search's cheap first test never rejects a statement that matches.

``find_statements`` skips the starts where ``_may_start`` says the first
pattern statement cannot match; a wrong "no" there would lose a match (a
patch reported as not applying), so it is checked against ``match`` on every
pattern of the series, on the vendor's and the patched file, and on a set
of hand-written shapes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import libcst as cst
import pytest

from patcher.patchset import load_patch_set
from patcher.transforms.pattern import Pattern, _blocks, _may_start, find_statements, match

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE
from tests.fixtures_vendor import PATCHES


SOURCES = {"vendor": VENDOR_SOURCE, "patched": PATCHED.read_bytes()}


def _statements(module: cst.Module) -> Iterator[cst.BaseStatement]:
    for block in _blocks(module):
        yield from block.body  # type: ignore[attr-defined]


def _series_patterns() -> list[Pattern]:
    found: list[Pattern] = []
    for patch in load_patch_set(PATCHES).patches:
        found += [marker.pattern for marker in (*patch.applied_when, *patch.requires)]
        for step in patch.steps:
            found += [value for value in vars(step).values() if isinstance(value, Pattern)]
    return found


SHAPES = [
    "use_v1 = True",
    "$X = $Y",
    "$...BODY",
    "x = 1; y = 2",
    "$S; y = 2",
    "a = b = $C",
    "self.tile = $T",
    "del $...NAMES",
    "m_new = torch.maximum(m, m_blk)",
    "if use_v1:\n    $...V1\nelse:\n    $...V2",
    "for $I in range($N):\n    $...BODY",
    "return $OUT",
]


CODE = textwrap.dedent("""\
    x = 1; y = 2
    a = b = 3
    use_v1 = True
    use_v1: bool = True
    use_v1 += 1
    self.tile = 4
    (use_v1) = False
    del k_tile, v_tile
    m_new = torch.maximum(m, m_blk)
    if use_v1: ops.run()
    else: pass
    for i in range(3): pass
    def f():
        return output
    """)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_no_series_pattern_loses_a_match(source: str) -> None:
    module = cst.parse_module(SOURCES[source])
    statements = list(_statements(module))
    checked = matched = 0
    for pattern in _series_patterns():
        first = pattern.statements[0]
        for statement in statements:
            checked += 1
            if match(first, statement) is not None:
                matched += 1
                assert _may_start(first, statement), (str(pattern), cst.Module([]).code_for_node(statement))
    assert matched and checked > 1000  # the check ran on real pairs, some of them matching


@pytest.mark.parametrize("shape", SHAPES)
def test_no_shape_loses_a_match(shape: str) -> None:
    first = Pattern.parse(shape).statements[0]
    for statement in _statements(cst.parse_module(CODE)):
        if match(first, statement) is not None:
            assert _may_start(first, statement), (shape, cst.Module([]).code_for_node(statement))


def test_it_rejects_other_statements_and_the_search_still_finds_them() -> None:
    module = cst.parse_module(CODE)
    pattern = Pattern.parse("use_v1 = True")
    kept = [s for s in _statements(module) if _may_start(pattern.statements[0], s)]
    # Only the plain assignments to use_v1 pass; the annotated, augmented,
    # other-named and compound statements are skipped without matching.
    assert [cst.Module([]).code_for_node(s).strip() for s in kept] == ["use_v1 = True", "(use_v1) = False"]
    assert len(find_statements(pattern, module)) == 1


@pytest.mark.parametrize(("pattern", "source", "found"), [
    # A bare statement metavariable takes any statement, compound ones too.
    ("$S\nreturn out", "if v1:\n    out = 1\nreturn out\n", 1),
    ("$...HEAD\nreturn out", "x = 1\nreturn out\n", 1),
    # A metavariable among the small statements of one line takes any of them.
    ("x = 1; $X", "x = 1; y = 2\n", 1),
    # Assignments: a metavariable target takes any name; an attribute target is compared as code.
    ("$T = compute()", "y = compute()\n", 1),
    ("self.out = compute()", "self.out = compute()\nself.other = compute()\n", 1),
    ("a = b = f()", "a = b = f()\na = f()\n", 1),
    ("a = f()", "a = b = f()\n", 0),
    ("out = f()", "result = f()\n", 0),
    ("out = f(); log()", "out = f()\n", 0),
])
def test_the_quick_first_statement_test_never_skips_a_match(pattern: str, source: str, found: int) -> None:
    assert len(find_statements(Pattern.parse(pattern), cst.parse_module(source))) == found
