"""Rule python-3.10 on syntax newer than 3.10: each construct named with its version and PEP, at its own line.

The stdlib parser reads with ``feature_version=(3, 10)``; a tree walk finds
the PEP 646 star forms it lets through (also split over lines), and libcst
names the 3.12 syntax an older interpreter cannot parse at all. Stars that
3.10 reads are fine. Files are read as bytes, as they come out of a vendor
zip (CRLF).
"""

from __future__ import annotations

import sys

import pytest

from patcher.checks import RULES
from patcher.checks.base import Invalid, Valid
from patcher.checks.examples import check_example

from tests.fixtures_rules import python_3_10_findings

NEWER = "syntax newer than Python 3.10"


def test_every_newer_construct_is_named_at_its_own_line_in_order() -> None:
    data = (b"def run(x, a):\r\n"
            b"    try:\r\n"
            b"        pass\r\n"
            b"    except* (ValueError, TypeError):\r\n"
            b"        pass\r\n"
            b"    except* OSError:\r\n"
            b"        pass\r\n"
            b"    return x[*a]\r\n")
    found = [(4, f"uses `except*` (3.11, PEP 654), {NEWER}"),
             (8, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")]
    # A 3.10 interpreter cannot parse the file at all: libcst names the first construct only.
    assert python_3_10_findings(data) == (found if sys.version_info >= (3, 11) else found[:1])


def test_a_star_in_a_subscript_split_over_lines_is_found_at_the_star() -> None:
    data = b"shape = x[\n    batch,\n    *rest]\n"
    assert python_3_10_findings(data) == [(3, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")]


def test_a_star_annotation_on_args_split_over_lines_is_found_at_args() -> None:
    data = b"def f(\n    a,\n    *args: *Ts,\n):\n    pass\n"
    assert python_3_10_findings(data) == [(3, f"uses a star annotation on *args (3.11, PEP 646), {NEWER}")]


@pytest.mark.parametrize("code, line", [
    ("x[\n    *a,\n]\n", 2),
    ("y = x[a,\n      *b]\n", 2),
    ("def f(*args: *Ts):\n    pass\n", 1),
])
def test_pep_646_forms_split_over_lines_are_found(code: str, line: int) -> None:
    found = check_example(RULES["python-3.10"], Invalid(code, line, "PEP 646"))
    assert [(v.line, "PEP 646" in v.message) for v in found] == [(line, True)]


def test_stars_that_python_3_10_reads_are_fine() -> None:
    data = (b"y = x[(*a, b)]\n"
            b"z = [*a, *b]\n"
            b"w = x[a, (*b,)]\n"
            b"v = x[[*a]]\n"
            b"def f(*args: int, **kw: int) -> None:\n    pass\n")
    assert python_3_10_findings(data) == []


@pytest.mark.parametrize("code", ["print(*args, **kwargs)\n", "x = [*a, b]\ny = f(a, *b)\n", "x[(*a, b)]\n"])
def test_stars_that_3_10_allows_are_not_pep_646(code: str) -> None:
    assert check_example(RULES["python-3.10"], Valid(code)) == []


def test_a_newer_construct_in_a_file_this_interpreter_cannot_parse_is_named_by_libcst() -> None:
    data = b"import torch\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n"
    assert python_3_10_findings(data) == [(4, f"uses type parameters `[T]` (3.12, PEP 695), {NEWER}")]


def test_several_constructs_in_a_file_this_interpreter_cannot_parse_are_named_as_far_as_it_can() -> None:
    # Before 3.12 ``ast`` cannot read a type alias, and libcst names the first construct only;
    # from 3.12 on ``ast`` reads the file and every construct is named.
    star = (1, f"uses a star expression in a subscript (3.11, PEP 646), {NEWER}")
    alias = (2, f"uses a `type` alias statement (3.12, PEP 695), {NEWER}")
    both = sys.version_info >= (3, 12)
    assert python_3_10_findings(b"y = x[*a]\ntype V = int\n") == ([star, alias] if both else [star])
    annotation = (1, f"uses a star annotation on *args (3.11, PEP 646), {NEWER}")
    assert python_3_10_findings(b"def f(*args: *Ts): pass\ntype V = int\n") == ([annotation, alias] if both else [annotation])
    except_star = (3, f"uses `except*` (3.11, PEP 654), {NEWER}")
    alias_5 = (5, f"uses a `type` alias statement (3.12, PEP 695), {NEWER}")
    assert python_3_10_findings(b"try:\n    pass\nexcept* ValueError:\n    pass\ntype V = int\n") == (
        [except_star, alias_5] if both else [except_star])
    assert python_3_10_findings(b"x = 1\r\ntype Vector = list[float]\r\n") == [alias]


def test_newer_syntax_libcst_has_no_name_for_is_reported_with_pythons_words() -> None:
    data = b"name = 'x'\ny = f'{name}'\nz = f\"{'a' + \"b\"}\"\n"
    assert python_3_10_findings(data) == [(3, f"uses {NEWER}: f-string: expecting '}}'")]
