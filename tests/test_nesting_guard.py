"""The nesting guard (patcher/depth.py): what it lets a parser see, and what it refuses, with the line.

Every parse of vendor Python goes through ``parse_problem`` first. What
must hold: every shape nested past the bound is refused at its line, the
same depth behind a tokenizer trick is refused too, the count never falls
below the depth of the tree a parser builds, and the vendor's own shapes
stay far inside the bound.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from patcher.depth import (
    MAX_DATA_NESTING,
    MAX_NESTING,
    MAX_SOURCE,
    data_nesting_problem,
    nesting_count,
    nesting_problem,
    parse_problem,
)
from patcher.syntax import child_nodes
from tests.fixtures_hostile_inputs import (
    DEEP,
    HIDDEN_DEPTH,
    LIBCST_ONLY,
    SHALLOW,
    SHAPES,
    deep_python,
)
from tests.fixtures_vendor import FIXTURES, ROOT, SHIPPED, VENDOR_TREE

MULTI_LINE = {"elif chain", "blocks"}  # shapes whose depth grows line by line


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_deep_shape_is_refused_at_its_line(shape: str) -> None:
    source = deep_python(shape, DEEP, before=3)
    problem = parse_problem(source)
    assert problem is not None
    assert problem.reason == f"nests deeper than {MAX_NESTING} levels (brackets, operators, blocks)"
    if shape in MULTI_LINE:  # the line where the blocks or the chain pass the bound
        assert 4 < problem.line <= source.count("\n")
    else:
        assert problem.line == 4
        assert str(problem) == f"nests deeper than {MAX_NESTING} levels (brackets, operators, blocks) at line 4"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_well_inside_the_bound_is_let_through(shape: str) -> None:
    assert parse_problem(deep_python(shape, SHALLOW)) is None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_ast_readers_are_held_to_the_same_bound_except_where_ast_flattens(shape: str) -> None:
    found = parse_problem(deep_python(shape), strings_nest=False)
    assert (found is None) == (shape in LIBCST_ONLY)


@pytest.mark.parametrize("trick", sorted(HIDDEN_DEPTH))
def test_depth_hidden_behind_a_tokenizer_trick_is_still_found(trick: str) -> None:
    assert nesting_problem(HIDDEN_DEPTH[trick]) is not None


@pytest.mark.parametrize("source", [
    "x = " + "-" * 150 + "f(" + "-" * 100 + "1)\n",  # a short bracket, read in one step, holds the rest
    "x = " + "-" * 150 + "f(g(h(" + "-" * 80 + "1)))\n",
    "def f():\n" + "    x = " + "-" * 100 + "[(" + "-" * 95 + "1)]\n",
    "x = (\n" + "    -\n" * 250 + "    1)\n",  # a bracket over many lines
])
def test_depth_inside_brackets_read_in_one_step_still_counts(source: str) -> None:
    assert nesting_problem(source) is not None
    assert nesting_problem(source, 400) is None  # and it is the nesting that counts, not the length


def test_the_line_of_a_too_deep_statement_counts_every_kind_of_line_end() -> None:
    source = "a = 1\r\nb = 2\rc = 3\nx = " + "-" * 300 + "1\n"
    problem = nesting_problem(source)
    assert problem is not None and problem.line == 4


@pytest.mark.parametrize("text", [
    "x = '" + "(" * 500 + "'\n",
    "x = 1  # " + "- " * 500 + "\n",
    '"""\n' + "[" * 500 + '\n"""\n',
    "x = f'" + "(" * 500 + "{y}'\n",
    "x = rb'" + "\\'" + "(" * 500 + "'\n",
    "x = f'{{" + "(" * 500 + "}}'\n",
    "x = '\\N{DASH}' + f'\\N{EM DASH}" + "-" * 500 + "'\n",
])
def test_what_strings_and_comments_hold_does_not_count(text: str) -> None:
    assert nesting_problem(text) is None


def test_a_long_flat_display_is_shallow_however_long() -> None:
    assert nesting_problem("x = [" + "-1, " * 100_000 + "]\n") is None
    assert nesting_problem("f(" + "a=-b.c, " * 100_000 + ")\n") is None


@pytest.mark.parametrize("end", ["1j\n", "0x1F\n", "$\n", "?\n", "\x00\n", ""],
                         ids=["complex", "hex", "dollar", "question mark", "nul", "no newline"])
def test_a_long_statement_before_what_the_scan_skips_is_read_in_one_pass(end: str) -> None:
    # The scan searched for its next token from each character of the 'a = ' run again when none came right after
    # it: 80 KB took minutes, this 800 KB hours. Valid Python (1j, 0x1F, no final newline) as much as not.
    assert nesting_problem("x = " + "a = " * 200_000 + end) is None
    assert nesting_problem("x = " + "a = " * 200_000 + end + "y = " + "-" * 300 + "1\n") is not None


def test_a_statement_counts_as_deep_first_in_the_file_as_after_other_statements() -> None:
    statement = "x = ((((y))))\n"
    first = nesting_count(statement)
    assert first == nesting_count("import os\n" + statement) == nesting_count("import os\n\n# note\n" + statement)


def test_each_element_of_a_display_is_counted_from_nothing() -> None:
    # The operators of one element do not add to the next: (1, - - 2) is as deep as (- - 2).
    deepest = "- - - - - - 2"
    assert nesting_count(f"x = (1, {deepest})\n") == nesting_count(f"x = ({deepest})\n")
    assert nesting_count(f"x = [[1], - 3, {deepest}]\n") == nesting_count(f"x = [{deepest}]\n")


def test_a_lambda_in_a_display_does_not_join_the_elements_after_it() -> None:
    handlers = "HANDLERS = {\n" + "".join(f"    'k{i}': lambda x: -x.y + 1,\n" for i in range(1000)) + "}\n"
    assert nesting_problem(handlers) is None


def test_a_file_past_the_size_bound_is_refused_whole() -> None:
    problem = parse_problem("x = 1\n" * (MAX_SOURCE // 6 + 1))
    assert problem is not None and problem.line == 0
    assert problem.reason == f"is {MAX_SOURCE + 6 - MAX_SOURCE % 6} bytes, more than the {MAX_SOURCE} patcher parses"


def test_bytes_are_read_in_the_encoding_their_coding_line_names() -> None:
    latin = "# -*- coding: latin-1 -*-\nname = 'café'\nx = ".encode("latin-1") + b"-" * 300 + b"1\n"
    problem = nesting_problem(latin)
    assert problem is not None and problem.line == 3


# -- the vendor's own shapes stay far inside ------------------------------------------------------

KNOWN_GOOD_MARGIN = 4  # the vendor's files reach under a quarter of the bound (they reach 29)


def vendor_python() -> list[tuple[str, str]]:
    files = sorted(VENDOR_TREE.rglob("*.py")) + sorted((ROOT / "tests" / "golden").glob("*.py"))
    return [(str(path.relative_to(ROOT)), path.read_text()) for path in files]


def diagnostic_version() -> str:
    """A 2,500-line paged_attn.py as later versions grew: the vendor's class, and copies of it beside it."""
    original = (VENDOR_TREE / SHIPPED).read_text()
    copies = [original.replace("class PagedAttention", f"class PagedAttentionDiagnostics{n}") for n in range(4)]
    text = original + "\n".join(copies)
    assert text.count("\n") >= 2_000
    return text


@pytest.mark.parametrize("name,source", [*vendor_python(), ("2,500-line diagnostic version", diagnostic_version())])
def test_the_vendors_own_files_stay_far_inside_the_bound(name: str, source: str) -> None:
    assert nesting_count(source) * KNOWN_GOOD_MARGIN <= MAX_NESTING, name


def test_the_fixture_zip_member_as_bytes_is_let_through() -> None:
    import zipfile

    with zipfile.ZipFile(FIXTURES / "enginex-vllm-bi100-qwen36-main.zip") as archive:
        data = archive.read(f"enginex-vllm-bi100-qwen36-main/{SHIPPED}")
    assert parse_problem(data) is None


# -- the count never falls below the tree's depth --------------------------------------------------

# libcst's module, statement line and statement, ast's module and statement: the levels
# above the expression a count of a statement leaves out.
FRAME_SLACK = 6

NAMES = st.sampled_from(["a", "b", "x1", "yield_", "f"])
LEAVES = st.one_of(NAMES, st.integers(0, 99).map(str), st.sampled_from(["'s'", '"t"', "1.5", "...", "None"]))


def _expressions() -> st.SearchStrategy[str]:
    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        pair = st.tuples(inner, inner)
        return st.one_of(
            st.tuples(st.sampled_from(["-", "+", "~", "not "]), inner).map(lambda t: f"{t[0]}{t[1]}"),
            st.tuples(inner, st.sampled_from(["+", "*", "**", "and", "or", "<", "==", "in", "is", "|", "@"]), inner)
            .map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
            pair.map(lambda t: f"({t[0]} if {t[1]} else {t[0]})"),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"{e}.attr"),
            st.tuples(inner, st.lists(inner, max_size=3)).map(lambda t: f"({t[0]})({', '.join(t[1])})"),
            pair.map(lambda t: f"({t[0]})[{t[1]}]"),
            st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
            pair.map(lambda t: "{" + f"{t[0]}: {t[1]}" + "}"),
            inner.map(lambda e: f"(lambda q, r=1: {e})"),
            inner.map(lambda e: f"f'{{{e}}}'"),
            inner.map(lambda e: f"'a' 'b' {e}" if not e.startswith(("'", '"')) else e),
            pair.map(lambda t: f"[{t[0]} for q in {t[1]} if q]"),
        )
    return st.recursive(LEAVES, grow, max_leaves=40)


def _statements() -> st.SearchStrategy[str]:
    def wrap(source: str, headers: list[str]) -> str:
        indent = ""
        lines = []
        for header in headers:
            lines.append(f"{indent}{header}\n")
            indent += "    "
        lines.append(f"{indent}x = {source}\n")
        return "".join(lines)
    headers = st.lists(st.sampled_from(["if a:", "for q in b:", "def f():", "class C:", "with a:"]), max_size=6)
    return st.builds(wrap, _expressions(), headers)


def ast_depth(tree: ast.AST) -> int:
    best, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node)
                     if not isinstance(child, ast.expr_context))
    return best


def libcst_depth(tree: cst.CSTNode) -> int:
    best, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in child_nodes(node))
    return best


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_statements())
def test_the_count_is_never_below_the_depth_of_the_tree_a_parser_builds(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            assume(False)
    assert ast_depth(tree) <= nesting_count(source, strings_nest=False) + FRAME_SLACK
    assert libcst_depth(cst.parse_module(source)) <= nesting_count(source) + FRAME_SLACK


# -- JSON and TOML ---------------------------------------------------------------------------------


def test_json_nested_past_the_bound_is_refused_at_its_line() -> None:
    text = '{\n  "a": 1,\n  "b": ' + "[" * (MAX_DATA_NESTING + 1) + "]" * (MAX_DATA_NESTING + 1) + "\n}\n"
    problem = data_nesting_problem(text)
    assert problem is not None and problem.line == 3
    assert data_nesting_problem('{"a": "' + "[" * 500 + '"}') is None  # inside a string
    assert data_nesting_problem("[" * MAX_DATA_NESTING + "]" * MAX_DATA_NESTING) is None


def test_toml_nested_past_the_bound_is_refused_and_its_strings_and_comments_do_not_count() -> None:
    deep = "[t]\nx = " + "{y = " * (MAX_DATA_NESTING + 1) + "1" + "}" * (MAX_DATA_NESTING + 1) + "\n"
    problem = data_nesting_problem(deep, toml=True)
    assert problem is not None and problem.line == 2
    quiet = "# " + "[" * 500 + "\na = '" + "[" * 500 + "'\nb = '''\n" + "{" * 500 + "'''\nc = \"\"\"\n[[[\"\"\"\n"
    assert data_nesting_problem(quiet, toml=True) is None
