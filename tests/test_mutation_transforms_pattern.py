"""The pattern engine on shapes no other test wrote: statement runs with `$...`, lists, defs, literals, the memo.

Each test pins what a patch author relies on (issue 13): a `$...X` among the
statements of a pattern takes any run of them, at the start, in the middle or
at the end; a list's `$...X` takes its elements; a `def` pattern compares its
parameters; the search survives any number of patterns and scopes.
"""

from __future__ import annotations

import textwrap
import warnings

import libcst as cst
import pytest

from patcher.patchset.runner import Status, patch_source
from patcher.transforms import pattern as pattern_module
from patcher.transforms.pattern import (
    Pattern,
    PatternSyntaxError,
    contains,
    find_expressions,
    find_statements,
)


def _source(module: cst.Module, node: object) -> str:
    if isinstance(node, tuple):
        return "".join(module.code_for_node(n) for n in node)
    return module.code_for_node(node)  # type: ignore[arg-type]


def _body(module: cst.Module, name: str) -> cst.IndentedBlock:
    """The block of the top-level function NAME (statement runs are found per block)."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            assert isinstance(statement.body, cst.IndentedBlock)
            return statement.body
    raise AssertionError(f"no function {name}")


FORWARD_DECODE = '''\
def forward_decode(query, key_cache, value_cache, max_seq_len):
    """Decode one token per sequence."""
    key_cache, value_cache = value_cache, key_cache  # the vendor swapped them
    output = torch.empty_like(query)
    use_v1 = max_seq_len <= 8192

    # V1 for short contexts, V2 above.
    if use_v1:
        ops.paged_attention_v1(output, query, key_cache, value_cache)
    else:
        ops.paged_attention_v2(output, query, key_cache, value_cache)
    torch.cuda.synchronize()
    return output
'''


# --------------------------------------------------------------------------- `$...X` among statements


def test_a_sequence_in_the_middle_of_a_statement_pattern_takes_the_statements_between() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    found = find_statements(Pattern.parse("use_v1 = $COND\n$...BRANCHES\nreturn output"), module)
    assert len(found) == 1
    (run,) = found
    assert run.block is _body(module, "forward_decode")
    assert (run.start, run.end) == (3, 7)
    assert _source(module, run.bindings["COND"]) == "max_seq_len <= 8192"
    between = run.bindings["BRANCHES"]
    assert isinstance(between, tuple) and [type(s) for s in between] == [cst.If, cst.SimpleStatementLine]
    assert _source(module, between).strip().endswith("torch.cuda.synchronize()")


def test_a_sequence_after_two_fixed_statements() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    (run,) = find_statements(Pattern.parse("output = torch.empty_like($Q)\nuse_v1 = $COND\n$...REST"), module)
    assert (run.start, run.end) == (2, 4) and run.bindings["REST"] == ()
    assert _source(module, run.bindings["Q"]) == "query"


def test_a_statement_between_two_sequences_is_found_with_the_shortest_runs() -> None:
    # "use_v1 = ... anywhere in a block": the trailing `$...` takes nothing,
    # even where the block is that one statement.
    module = cst.parse_module("def f(n):\n    use_v1 = n <= 8192\n    return use_v1\n\ndef g(n):\n    use_v1 = n <= 4096\n")
    found = find_statements(Pattern.parse("$...BEFORE\nuse_v1 = $LIMIT\n$...AFTER"), module)
    assert [(run.block, run.start, run.end) for run in found] == [
        (_body(module, "f"), 0, 1), (_body(module, "g"), 0, 1)]
    assert all(run.bindings["BEFORE"] == () == run.bindings["AFTER"] for run in found)


def test_a_sequence_in_the_middle_may_take_no_statement() -> None:
    module = cst.parse_module("def f(x):\n    y = g(x)\n    return y\n")
    (run,) = find_statements(Pattern.parse("y = g(x)\n$...BETWEEN\nreturn y"), module)
    assert (run.start, run.end) == (0, 2) and run.bindings["BETWEEN"] == ()


def test_a_leading_sequence_starts_at_the_top_of_the_block_even_at_a_compound_statement() -> None:
    # The run begins at the block's first statement, an `if`, though the
    # pattern's first fixed statement is a plain line further down.
    source = "def f(x):\n    if x is None:\n        x = 0\n    y = x + 1\n    return y\n"
    module = cst.parse_module(source)
    (run,) = find_statements(Pattern.parse("$...SETUP\nreturn y"), module)
    assert (run.start, run.end) == (0, 3)
    assert _source(module, run.bindings["SETUP"]) == "if x is None:\n    x = 0\ny = x + 1\n"


def test_a_trailing_sequence_may_take_nothing_at_the_end_of_a_block() -> None:
    module = cst.parse_module("def f(query):\n    output = torch.empty_like(query)\n")
    (run,) = find_statements(Pattern.parse("output = torch.empty_like(query)\n$...REST"), module)
    assert (run.start, run.end) == (0, 1) and run.bindings["REST"] == ()


def test_a_pattern_whose_sequence_cannot_be_completed_finds_nothing() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    assert find_statements(Pattern.parse("use_v1 = $COND\n$...BRANCHES\nreturn query"), module) == []
    assert find_statements(Pattern.parse("use_v2 = $COND\n$...BRANCHES\nreturn output"), module) == []


def test_a_sequence_among_the_small_statements_of_one_line() -> None:
    module = cst.parse_module("out = f(x)\ntorch.cuda.synchronize()\nlog(out); torch.cuda.synchronize()\n")
    found = find_statements(Pattern.parse("$...BEFORE; torch.cuda.synchronize()"), module)
    assert [(run.start, run.end) for run in found] == [(1, 2), (2, 3)]
    assert found[0].bindings["BEFORE"] == ()
    assert _source(module, found[1].bindings["BEFORE"]) == "log(out); "


def test_an_unpacking_assignment_before_the_match_is_passed_over() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    (run,) = find_statements(Pattern.parse("output = torch.empty_like($Q)"), module)
    assert (run.start, run.end) == (2, 3)
    assert not find_statements(Pattern.parse("key_cache = value_cache"), module)


# --------------------------------------------------------------------------- lists, defs, literals


def test_a_list_sequence_takes_the_elements(load_patch) -> None:  # type: ignore[no-untyped-def]
    patch = load_patch(textwrap.dedent('''
        id = "head-sizes"
        description = "Allow head size 256"
        origin = "test"
        last-update = "2026-12-01"
        target = "x.py"
        scope = ""

        [[steps]]
        op = "replace"
        pattern = "_SUPPORTED_HEAD_SIZES = [$...SIZES]"
        code = "_SUPPORTED_HEAD_SIZES = [$...SIZES, 256]"
    '''))
    source = "_SUPPORTED_HEAD_SIZES = [64, 80, 96, 112, 128]  # of the card\n"
    result = patch_source("x.py", source.encode(), [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].detail
    assert result.patched == b"_SUPPORTED_HEAD_SIZES = [64, 80, 96, 112, 128, 256]  # of the card\n"


def test_a_list_element_metavariable_binds_the_value() -> None:
    module = cst.parse_module("sizes = [64, 80, 96]\n")
    (run,) = find_statements(Pattern.parse("sizes = [$FIRST, $...REST]"), module)
    assert isinstance(run.bindings["FIRST"], cst.Integer)
    assert _source(module, run.bindings["REST"]) == "80, 96"


@pytest.mark.parametrize(("source", "found"), [
    ("def _forward_decode_pytorch(self, query):\n    return query\n", 1),
    ("def _forward_decode_pytorch(self, query):  # fallback\n\n    # keep\n    return query\n", 1),
    ("def _forward_decode_pytorch(self, query, *args):\n    return query\n", 0),
    ("def _forward_decode_pytorch(self, query, *, scale):\n    return query\n", 0),
    ("def _forward_decode_pytorch(self, query, /):\n    return query\n", 0),
])
def test_a_def_pattern_compares_star_and_slash_parameters(source: str, found: int) -> None:
    pattern = Pattern.parse("def _forward_decode_pytorch(self, query):\n    $...BODY")
    assert len(find_statements(pattern, cst.parse_module(source))) == found


def test_a_def_pattern_with_star_args_matches_only_star_args() -> None:
    pattern = Pattern.parse("def f(self, *args):\n    $...BODY")
    assert len(find_statements(pattern, cst.parse_module("def f(self, *args):\n    pass\n"))) == 1
    assert not find_statements(pattern, cst.parse_module("def f(self):\n    pass\n"))


def test_strings_python_warns_about_still_match_by_spelling_with_warnings_as_errors() -> None:
    # Under `python -W error` evaluating "\d+" is an error; the text decides then.
    module = cst.parse_module('pattern = re.compile("\\d+\\.\\d+")\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert contains(Pattern.parse('pattern = re.compile("\\d+\\.\\d+")'), module)
        assert not contains(Pattern.parse('pattern = re.compile("\\w+")'), module)


def test_a_pattern_may_start_and_end_with_any_name() -> None:
    module = cst.parse_module("XLA = False\nuse_v2 = max_seq_len > _PARTITION_MAX\n")
    assert contains(Pattern.parse("use_v2 = max_seq_len > _PARTITION_MAX"), module)
    assert contains(Pattern.parse("XLA = False"), module)
    assert not contains(Pattern.parse("use_v2 = max_seq_len > _PARTITION_MA"), module)


# --------------------------------------------------------------------------- metavariables bound twice, layouts


def test_a_run_bound_first_never_equals_a_single_expression_later() -> None:
    module = cst.parse_module("validate(query, key_cache)\nout = decode(query)\n")
    assert find_statements(Pattern.parse("validate($...ARGS)\nout = decode($ARGS)"), module) == []
    assert len(find_statements(Pattern.parse("validate($Q, $...)\nout = decode($Q)"), module)) == 1


@pytest.mark.parametrize(("pattern", "names"), [
    ("out = decode($...ARGS)", {"ARGS", "ARGS:layout"}),
    ("out = decode($...)", set()),
    ("out = decode($_)", set()),
    ("out = decode(query)", set()),
    ("out = decode(query, $...REST)", {"REST"}),
])
def test_a_match_binds_only_what_the_pattern_names(pattern: str, names: set[str]) -> None:
    module = cst.parse_module("out = decode(query)\n")
    (run,) = find_statements(Pattern.parse(pattern), module)
    assert set(run.bindings) == names


def test_a_run_captured_twice_is_rebuilt_with_its_first_layout(load_patch) -> None:  # type: ignore[no-untyped-def]
    patch = load_patch(textwrap.dedent('''
        id = "decode-v2"
        description = "Call the V2 decode"
        origin = "test"
        last-update = "2026-12-01"
        target = "x.py"
        scope = "f"

        [[steps]]
        op = "replace"
        pattern = """
        validate_inputs($...ARGS)
        out = decode($...ARGS)
        """
        code = "out = decode_v2($...ARGS)"
    '''))
    source = "def f(query, key_cache):\n    validate_inputs(\n        query, key_cache)\n    out = decode(query, key_cache)\n"
    result = patch_source("x.py", source.encode(), [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].detail
    assert result.patched == b"def f(query, key_cache):\n    out = decode_v2(\n        query, key_cache)\n"


# --------------------------------------------------------------------------- expressions, syntax errors


def test_a_bare_metavariable_takes_each_outermost_expression() -> None:
    module = cst.parse_module("use_v1 = max_seq_len <= 8192\nlog(use_v1)\n")
    found = find_expressions(Pattern.parse("$X").expression, module)
    assert [_source(module, node) for node, _ in found] == ["use_v1", "max_seq_len <= 8192", "log(use_v1)"]
    assert [_source(module, bindings["X"]) for _, bindings in found] == [
        "use_v1", "max_seq_len <= 8192", "log(use_v1)"]


def test_an_expression_pattern_is_found_only_as_its_own_kind() -> None:
    module = cst.parse_module("out = scale * (q @ k)\nlog(q @ k)\n")
    found = find_expressions(Pattern.parse("q @ k").expression, module)
    assert [_source(module, node) for node, _ in found] == ["(q @ k)", "q @ k"]


def test_an_unterminated_string_in_a_pattern_says_so() -> None:
    with pytest.raises(PatternSyntaxError) as raised:
        Pattern.parse('log("decode with v1)')
    assert str(raised.value) == "not valid Python at line 1: tokenizer error: unterminated string literal"


# --------------------------------------------------------------------------- the search's memo


def test_the_search_stays_right_past_its_memo_of_earlier_answers() -> None:
    # A long build asks about far more (pattern, scope) pairs than the memo keeps.
    kept = pattern_module._FOUND_KEPT
    modules = [cst.parse_module(f"x = {n}\ny = {n}\n") for n in range(kept + 20)]
    patterns = [Pattern.parse(f"y = {n}") for n in range(kept + 20)]
    for n, module in enumerate(modules):
        assert [(m.start, m.end) for m in find_statements(patterns[n], module)] == [(1, 2)]
        assert find_statements(patterns[n - 1], module) == []
        assert len(pattern_module._FOUND) <= kept
    # Asked again, the earliest answers (long evicted) and the latest agree with a fresh search.
    for n in (0, 1, kept + 19):
        assert [(m.start, m.end) for m in find_statements(patterns[n], modules[n])] == [(1, 2)]
        assert find_statements(patterns[n], modules[n - 1]) == []


def test_the_same_scope_asked_about_two_patterns_gets_two_answers() -> None:
    module = cst.parse_module(FORWARD_DECODE)
    one, other = Pattern.parse("torch.cuda.synchronize()"), Pattern.parse("return output")
    assert [(m.start, m.end) for m in find_statements(one, module)] == [(5, 6)]
    assert [(m.start, m.end) for m in find_statements(other, module)] == [(6, 7)]
    elsewhere = cst.parse_module("torch.cuda.synchronize()\n")
    assert [(m.start, m.end) for m in find_statements(one, elsewhere)] == [(0, 1)]
    assert [(m.start, m.end) for m in find_statements(one, module)] == [(5, 6)]


def test_a_pattern_built_after_another_was_dropped_is_not_answered_for_it() -> None:
    # Patterns rendered per patch come and go; a new one may reuse a dropped
    # one's memory, and must still get its own answer.
    for n in range(50):
        module = cst.parse_module(f"block_size = {n}\n")
        found = [(m.start, m.end) for m in find_statements(Pattern.parse(f"block_size = {n}"), module)]
        other = [(m.start, m.end) for m in find_statements(Pattern.parse(f"block_size = {n + 1}"), module)]
        assert (found, other) == ([(0, 1)], [])
