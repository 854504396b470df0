"""Closest code and fingerprints, judged directly: the exact lines, texts and hashes a report shows."""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.records import Closest
from patcher.transforms.closest import (
    close_scopes,
    find_closest,
    line_mapper,
    one_line,
    qualified_names,
    written_lines,
)
from patcher.transforms.fingerprint import fingerprint, step_print
from patcher.transforms.pattern import Pattern, PatternSyntaxError, find_expressions, find_statements
from patcher.transforms.reuse_buffers import Buffer, ReuseBuffers
from patcher.transforms.insert import Insert
from patcher.transforms.replace import Replace
from patcher.transforms.scope import find_scope

# A vendor-shaped module: a class with the two forwards, helpers, a guarded
# import, a nested function and a method inside an if block of the class.
VENDOR = '''\
"""Paged attention for the BI-V100."""
from typing import TYPE_CHECKING

try:
    from vllm import _custom_ops as ops
except ImportError:  # CPU-only test runs
    ops = None

if TYPE_CHECKING:
    def _typing_only() -> None: ...

_PARTITION_SIZE = 512


class PagedAttention:
    """Decode and prefill."""

    @staticmethod
    def forward_decode(query, key_cache, value_cache, max_seq_len):
        # V1 up to 8192 tokens
        use_v1 = max_seq_len <= 8192
        if use_v1:
            out = ops.paged_attention_v1(query, key_cache)
        else:
            out = ops.paged_attention_v2(query, key_cache)
        return out

    @staticmethod
    def forward_prefix(query, key, value):
        def _tile(start):
            return query[start:start + 64]
        scale = query.shape[-1] ** -0.5
        return _tile(0) * scale

    if TYPE_CHECKING:
        def debug_dump(self) -> None: ...


def _pytorch_decode(query, key_cache):
    return query @ key_cache
'''


@pytest.fixture(scope="module")
def module() -> cst.Module:
    return cst.parse_module(VENDOR)


def test_qualified_names_in_source_order_with_nesting(module: cst.Module) -> None:
    # Functions under if/try blocks count; the nested def is named under its function.
    assert list(qualified_names(module)) == [
        "_typing_only",
        "PagedAttention",
        "PagedAttention.forward_decode",
        "PagedAttention.forward_prefix",
        "PagedAttention.forward_prefix._tile",
        "PagedAttention.debug_dump",
        "_pytorch_decode",
    ]


def test_qualified_names_with_a_prefix_and_none_inside_expressions() -> None:
    tree = cst.parse_module("handlers = [lambda: 1]\nclass A:\n    x = (lambda y: y)\n    def f(self): pass\n")
    assert list(qualified_names(tree, "mod.")) == ["mod.A", "mod.A.f"]


@pytest.mark.parametrize(("asked", "expected"), [
    ("PagedAttention.forward_decod", ("PagedAttention.forward_decode", "PagedAttention.forward_prefix",
                                      "PagedAttention.forward_prefix._tile")),
    ("PagedAttention.forward_prefx", ("PagedAttention.forward_prefix", "PagedAttention.forward_prefix._tile",
                                      "PagedAttention.forward_decode")),
    ("_pytorch_decod", ("_pytorch_decode",)),
    # The class was renamed past recognition: the method's own name still finds it.
    ("Qwertyuiopasdfghjklzxcvbnm.debug_dumb", ("PagedAttention.debug_dump",)),
    ("Zz.Yy.Xx.Ww.Vv.Uu.Tt._tile", ("PagedAttention.forward_prefix._tile",)),
    ("zzz", ()),
])
def test_close_scopes_names_the_nearest_ones(module: cst.Module, asked: str, expected: tuple[str, ...]) -> None:
    assert close_scopes(module, asked) == expected


def test_close_scopes_stops_at_its_limit(module: cst.Module) -> None:
    assert close_scopes(module, "PagedAttention.forward", limit=1) == ("PagedAttention.forward_prefix",)
    assert close_scopes(module, "PagedAttention.forward") == (
        "PagedAttention.forward_prefix", "PagedAttention.forward_decode", "PagedAttention")
    assert close_scopes(module, "Qwertyuiopasdfghjklzxcvbnm.forward_prefx", limit=1) == (
        "PagedAttention.forward_prefix",)


@pytest.mark.parametrize(("code", "shown"), [
    ("x = f(a,   b)  # note\n", "x = f(a, b)"),
    ("if use_v1:\n    out = 1\nelse:\n    out = 2\n", "if use_v1: ..."),
    ("y = __pv_X__ + __pvs_ARGS__\n", "y = $X + $...ARGS"),
    ("y = __pv____ + f(__pvs____)\n", "y = $_ + f($...)"),
    ("z = '" + "a" * 120 + "'\n", "z = '" + "a" * 92 + "..."),
])
def test_one_line_shows_code_as_ast_writes_it(code: str, shown: str) -> None:
    statement = cst.parse_module(code).body[0]
    assert one_line(statement) == shown


def test_one_line_is_at_most_a_hundred_characters() -> None:
    statement = cst.parse_module("w = " + " + ".join(f"v{i}" for i in range(60)) + "\n").body[0]
    shown = one_line(statement)
    assert len(shown) == 100 and shown.endswith("...") and shown.startswith("w = v0 + v1")


def test_line_mapper_and_written_lines() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nNEW1\nNEW2\nb\nc\nD\n"
    back = line_mapper(before, after)
    assert [back(line) for line in range(1, 7)] == [1, 2, 2, 2, 3, 4]
    assert back(99) == 4  # past the end: the last line
    assert written_lines(before, after) == frozenset({2, 3, 6})
    assert written_lines(before, before) == frozenset()


def test_the_closest_run_names_its_lines_and_the_first_statement_that_differs(module: cst.Module) -> None:
    pattern = Pattern.parse("use_v1 = max_seq_len <= 8192\nif use_v1:\n    out = ops.paged_attention_v1(query, key_cache)\n"
                            "else:\n    out = ops.paged_attention_v2(query, key_cache, 512)\n")
    scope = find_scope(module, "PagedAttention.forward_decode")
    closest = find_closest(pattern, module, scope)
    assert closest == Closest(first_line=21, last_line=25, statement=2,
                              pattern="out = ops.paged_attention_v2(query, key_cache, 512)",
                              code="out = ops.paged_attention_v2(query, key_cache)", matched=1,
                              differing_tokens=closest.differing_tokens if closest else 0,
                              inside="in its else, statement 1")
    assert closest is not None and closest.differing_tokens == 2  # ',' and '512'
    assert closest.describe() == ("closest: lines 21-25, statement 2 differs (in its else, statement 1): "
                                  "pattern 'out = ops.paged_attention_v2(query, key_cache, 512)', "
                                  "code 'out = ops.paged_attention_v2(query, key_cache)'")


def test_the_closest_run_prefers_the_same_kind_of_statement(module: cst.Module) -> None:
    pattern = Pattern.parse("scale = query.shape[-1] ** 0.5\nreturn _tile(0) * scale")
    closest = find_closest(pattern, module, find_scope(module, "PagedAttention.forward_prefix"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (32, 32, 1, 0)
    assert closest.code == "scale = query.shape[-1] ** (-0.5)" and closest.inside == ""


def test_a_block_that_ends_first_is_said_so(module: cst.Module) -> None:
    pattern = Pattern.parse("return query @ key_cache\nprint('done')")
    closest = find_closest(pattern, module, find_scope(module, "_pytorch_decode"))
    assert closest is not None and closest.statement == 2 and closest.code == ""
    assert closest.describe().endswith("pattern 'print('done')', the block ends there")


def test_a_full_match_is_not_a_closest_one(module: cst.Module) -> None:
    pattern = Pattern.parse("return query @ key_cache")
    assert find_closest(pattern, module, find_scope(module, "_pytorch_decode")) is None


def test_fingerprints_ignore_layout_and_see_code() -> None:
    first = cst.parse_module("x = f(a,\n      b)  # why\n").body[0]
    second = cst.parse_module("x = (f(a, b))\r\n").body[0]
    other = cst.parse_module("x = f(b, a)\n").body[0]
    assert fingerprint(first) == fingerprint(second)
    assert fingerprint(first).text == "x = f(a, b)"
    assert fingerprint(first).sha256 != fingerprint(other).sha256
    assert fingerprint(()).text == ""


def test_fingerprints_of_captured_arguments_read_as_arguments() -> None:
    call = cst.parse_module("y = f(q, k, scale=s)\n").body[0].body[0].value  # type: ignore[attr-defined]
    assert fingerprint(tuple(call.args)).text == "q, k, scale=s"
    assert fingerprint(call.args[0]).text == "q"


def test_step_print_records_each_match_and_its_bindings(module: cst.Module) -> None:
    step = Replace(pattern=Pattern.parse("use_v1 = max_seq_len <= $LIMIT"), code="use_v1 = True", expect=1)
    printed = step_print(3, step, module, "PagedAttention.forward_decode")
    assert printed.step == 3 and len(printed.matches) == 1
    match = printed.matches[0]
    assert match.code.text == "use_v1 = max_seq_len <= 8192"
    assert {name: p.text for name, p in match.bindings.items()} == {"LIMIT": "8192"}
    assert printed.to_json()["matches"][0]["bindings"]["LIMIT"][1] == "8192"


def test_searches_agree_with_the_prints(module: cst.Module) -> None:
    scope = find_scope(module, "PagedAttention.forward_decode")
    assert len(find_statements(Pattern.parse("return out"), scope)) == 1
    assert len(find_expressions(Pattern.parse("ops.$F(query, key_cache)").expression, scope)) == 2


# Every kind of block a compound statement has, for the "inside" path.
BLOCKS = '''\
def handler(x, y):
    try:
        a = 1
    except ValueError:
        b = 2
    except KeyError:
        c = 3
    else:
        d = 4
    finally:
        e = 5
    if x:
        f = 1
    elif y:
        g = 2
    else:
        h = 3
    for i in x:
        j = i
    else:
        k = 0
    while y:
        y -= 1
    else:
        m = 1
    with open(x) as fh:
        n = fh.read()
        o = 2
    return n
'''
TRY = "try:\n    a = 1\nexcept ValueError:\n    b = 2\nexcept KeyError:\n    c = 3\nelse:\n    d = 4\nfinally:\n    e = 5"
IF = "if x:\n    f = 1\nelif y:\n    g = 2\nelse:\n    h = 3"


@pytest.mark.parametrize(("pattern", "lines", "inside", "wanted", "found"), [
    (TRY.replace("c = 3", "c = 30"), (2, 11), "in except handler 2, statement 1", "c = 30", "c = 3"),
    (TRY.replace("d = 4", "d = 40"), (2, 11), "in its else, statement 1", "d = 40", "d = 4"),
    (TRY.replace("e = 5", "e = 50"), (2, 11), "in its finally, statement 1", "e = 50", "e = 5"),
    (IF.replace("h = 3", "h = 30"), (12, 17), "in its elif, statement 1, in its else, statement 1", "h = 30", "h = 3"),
    (IF.replace("g = 2", "g = 20"), (12, 17), "in its elif, statement 1, in its body, statement 1", "g = 20", "g = 2"),
    ("for i in x:\n    j = i\nelse:\n    k = 1", (18, 21), "in its else, statement 1", "k = 1", "k = 0"),
    ("while y:\n    y -= 1\nelse:\n    m = 2", (22, 25), "in its else, statement 1", "m = 2", "m = 1"),
    # The code's block goes on past the pattern's, or ends before it.
    ("with open(x) as fh:\n    n = fh.read()", (26, 28), "in its body, statement 2", "", "o = 2"),
    ("with open(x) as fh:\n    n = fh.read()\n    o = 2\n    p = 3", (26, 28), "in its body, statement 3", "p = 3", ""),
    # One handler fewer: the statements differ as a whole.
    (TRY.replace("except KeyError:\n    c = 3\n", ""), (2, 11), "", "try: ...", "try: ..."),
])
def test_the_closest_code_says_in_which_block_it_parts(pattern: str, lines: tuple[int, int], inside: str,
                                                       wanted: str, found: str) -> None:
    module = cst.parse_module(BLOCKS)
    closest = find_closest(Pattern.parse(pattern), module, find_scope(module, "handler"))
    assert closest is not None
    assert ((closest.first_line, closest.last_line), closest.inside, closest.pattern, closest.code) == (
        lines, inside, wanted, found)
    assert (closest.statement, closest.matched) == (1, 0)


def test_a_trailing_sequence_takes_the_rest_of_a_block() -> None:
    # `$...BODY` ends the while's body: its statements are not what differs, the else is.
    module = cst.parse_module(BLOCKS)
    pattern = Pattern.parse("for i in x:\n    j = i\nelse:\n    k = 0\nwhile $C:\n    $...BODY\nelse:\n    m = 3")
    closest = find_closest(pattern, module, find_scope(module, "handler"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (18, 25, 2, 1)
    assert (closest.inside, closest.pattern, closest.code) == ("in its else, statement 1", "m = 3", "m = 1")


def test_a_leading_sequence_takes_the_run_up_to_the_statement_that_differs_least() -> None:
    module = cst.parse_module(BLOCKS)
    closest = find_closest(Pattern.parse("$...HEAD\nreturn m"), module, find_scope(module, "handler"))
    assert closest is not None
    assert (closest.first_line, closest.last_line, closest.statement, closest.matched) == (2, 29, 2, 1)
    assert (closest.pattern, closest.code, closest.differing_tokens) == ("return m", "return n", 1)


@pytest.mark.parametrize(("pattern", "lines"), [
    ("use_v1 = $X\n$...MID\nreturn result", (21, 26)),
    ("use_v1 = max_seq_len <= $LIMIT\n$...\nreturn result", (21, 26)),
])
def test_a_sequence_in_the_middle_takes_what_lets_the_next_statement_come_closest(
        module: cst.Module, pattern: str, lines: tuple[int, int]) -> None:
    # `$...MID` could stop before the if (then 'return result' meets the whole
    # if) or take it (then it meets 'return out'): the second is the difference.
    closest = find_closest(Pattern.parse(pattern), module, find_scope(module, "PagedAttention.forward_decode"))
    assert closest is not None
    assert ((closest.first_line, closest.last_line), closest.statement, closest.matched) == (lines, 3, 2)
    assert (closest.pattern, closest.code, closest.differing_tokens) == ("return result", "return out", 1)


def test_metavariables_are_not_counted_as_differences(module: cst.Module) -> None:
    closest = find_closest(Pattern.parse("out = ops.paged_attention_v2($Q, $K, 512)"), module,
                           find_scope(module, "PagedAttention.forward_decode"))
    # The pattern's own tokens '( , , 512 )' against '( query , key_cache )': 3 differ; the
    # metavariables' names would add two more.
    assert closest is not None and (closest.first_line, closest.differing_tokens) == (25, 3)


@pytest.mark.parametrize("order", [("y", "xxxxxxxx"), ("xxxxxxxx", "y")])
def test_equal_token_counts_go_to_the_text_more_alike(order: tuple[str, str]) -> None:
    first, second = order
    module = cst.parse_module(f"def f():\n    a = compute({first})\n    a = compute({second})\n    return a\n")
    closest = find_closest(Pattern.parse("a = compute(xxxxxxxz)\nreturn b"), module, find_scope(module, "f"))
    assert closest is not None and closest.code == "a = compute(xxxxxxxx)" and closest.differing_tokens == 1
    assert closest.first_line == 2 + order.index("xxxxxxxx")


def test_a_two_line_statement_shows_its_header_and_an_ellipsis() -> None:
    assert one_line(cst.parse_module("if use_v1:\n    out = 1\n").body[0]) == "if use_v1: ..."
    assert one_line(cst.parse_module("out = 1\n").body[0]) == "out = 1"


def test_lines_are_the_file_as_read_after_earlier_steps(module: cst.Module) -> None:
    # An earlier step of the patch added two lines above the class: the report
    # still names the lines a user sees in the vendor's file.
    grown = Replace(pattern=Pattern.parse("_PARTITION_SIZE = 512"),
                    code="_PARTITION_SIZE = 512\n_EXTRA = 1\n_MORE = 2\n", expect=1).apply(module, "")
    pattern = Pattern.parse("use_v1 = max_seq_len <= 8192\nif use_v1:\n    out = ops.paged_attention_v1(query, key_cache)\n"
                            "else:\n    out = ops.paged_attention_v2(query, key_cache, 512)\n")
    scope = find_scope(grown, "PagedAttention.forward_decode")
    as_patched = find_closest(pattern, grown, scope)
    as_read = find_closest(pattern, grown, scope, module)
    assert as_patched is not None and as_read is not None
    assert (as_patched.first_line, as_patched.last_line) == (23, 27)
    assert (as_read.first_line, as_read.last_line) == (21, 25)
    assert as_read.inside == as_patched.inside == "in its else, statement 1"


def test_code_an_earlier_step_wrote_comes_last(module: cst.Module) -> None:
    # The pattern was written against the vendor's code: a statement the patch
    # itself inserted is not what it "almost matched", even if it is closer.
    grown = Insert(anchor=Pattern.parse("use_v1 = max_seq_len <= 8192"), position="after",
                   code="out = ops.paged_attention_v9(query, key_cache)\n", expect=1).apply(
        module, "PagedAttention.forward_decode")
    scope = find_scope(grown, "PagedAttention.forward_decode")
    pattern = Pattern.parse("out = ops.paged_attention_v9(query, key_cache, 1)")
    written = find_closest(pattern, grown, scope)
    vendor = find_closest(pattern, grown, scope, module)
    assert written is not None and vendor is not None
    assert (written.first_line, written.code) == (22, "out = ops.paged_attention_v9(query, key_cache)")
    assert (vendor.first_line, vendor.last_line, vendor.code) == (23, 23, "out = ops.paged_attention_v1(query, key_cache)")


# The sha256 a manifest records for `x = f(a, b)`: `upgrade` compares manifests
# written by earlier runs with this run's, so the hash of the same code must
# never change (the ast dump with field names, without positions).
X_EQUALS_F_A_B = "2d587f630af10d6eae559919a6a9948fcb1be2ee9ada2a7269ac9cfb7963d90c"


def test_a_fingerprint_is_the_hash_earlier_manifests_recorded() -> None:
    assert fingerprint(cst.parse_module("x = f(a,\n b)  # layout\r\n").body[0]).sha256 == X_EQUALS_F_A_B
    assert fingerprint(()).sha256 == fingerprint(()).sha256 != X_EQUALS_F_A_B


def test_prints_name_what_each_metavariable_took_and_nothing_of_its_layout(module: cst.Module) -> None:
    # A call's function captured by $F also records the call's layout under a
    # key of its own: that is not code, and no print is made of it.
    step = Replace(pattern=Pattern.parse("out = $F(query, key_cache)"), code="out = 1", expect=2)
    printed = step_print(1, step, module, "PagedAttention.forward_decode")
    assert [(m.code.text, {k: v.text for k, v in m.bindings.items()}) for m in printed.matches] == [
        ("out = ops.paged_attention_v1(query, key_cache)", {"F": "ops.paged_attention_v1"}),
        ("out = ops.paged_attention_v2(query, key_cache)", {"F": "ops.paged_attention_v2"}),
    ]


def test_an_insert_prints_what_its_anchor_matched(module: cst.Module) -> None:
    step = Insert(anchor=Pattern.parse("scale = $S"), position="after", code="pass\n", expect=1)
    printed = step_print(2, step, module, "PagedAttention.forward_prefix")
    assert [(m.code.text, {k: v.text for k, v in m.bindings.items()}) for m in printed.matches] == [
        ("scale = query.shape[-1] ** (-0.5)", {"S": "query.shape[-1] ** (-0.5)"})]


def test_reuse_buffers_prints_each_computation_under_the_temporary_s_name(module: cst.Module) -> None:
    buffer = Buffer("out", "out_buf", "torch.empty_like(query)",
                    Pattern.parse("ops.$F(query, $CACHE)").expression, "torch.add($OUT, 0, out=$OUT)")
    step = ReuseBuffers(anchor=Pattern.parse("use_v1 = $X"), buffers=(buffer,))
    printed = step_print(1, step, module, "PagedAttention.forward_decode")
    assert [(m.code.text, {k: v.text for k, v in m.bindings.items()}) for m in printed.matches] == [
        ("use_v1 = max_seq_len <= 8192", {"X": "max_seq_len <= 8192"}),
        ("ops.paged_attention_v1(query, key_cache)", {"out.F": "paged_attention_v1", "out.CACHE": "key_cache"}),
        ("ops.paged_attention_v2(query, key_cache)", {"out.F": "paged_attention_v2", "out.CACHE": "key_cache"}),
    ]


@pytest.mark.parametrize(("text", "message"), [
    ("", "the pattern is empty"),
    ("   \n# only a comment\n", "the pattern is empty"),
    ("x = (", "not valid Python at line 2, column 0: expected one of"),
])
def test_a_pattern_that_is_not_code_says_why(text: str, message: str) -> None:
    with pytest.raises(PatternSyntaxError) as raised:
        Pattern.parse(text)
    assert str(raised.value).startswith(message)
