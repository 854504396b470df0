"""What a step matched, printed for the manifest: each match's code and what each metavariable took.

Every operation prints what its patterns matched (an insert its anchor,
reuse-buffers each computation under the temporary's name); a capture's
layout is not a binding; the prints agree with the searches.
"""

from __future__ import annotations

import libcst as cst

from patcher.transforms.fingerprint import step_print
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern, find_expressions, find_statements
from patcher.transforms.replace import Replace
from patcher.transforms.reuse_buffers import Buffer, ReuseBuffers
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import DECODE


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


def test_prints_name_what_each_metavariable_took_and_nothing_of_its_layout(module: cst.Module) -> None:
    # A call's function captured by $F also records the call's layout under a
    # key of its own: that is not code, and no print is made of it.
    step = Replace(pattern=Pattern.parse("out = $F(query, key_cache)"), code="out = 1", expect=2)
    printed = step_print(1, step, module, "PagedAttention.forward_decode")
    assert [(m.code.text, {k: v.text for k, v in m.bindings.items()}) for m in printed.matches] == [
        ("out = ops.paged_attention_v1(query, key_cache)", {"F": "ops.paged_attention_v1"}),
        ("out = ops.paged_attention_v2(query, key_cache)", {"F": "ops.paged_attention_v2"}),
    ]


def test_the_layout_of_a_captured_argument_run_is_not_a_binding() -> None:
    module = cst.parse_module(DECODE)
    step = Replace(pattern=Pattern.parse("out = ops.paged_attention_v1($...ARGS)"), code="out = 1", expect=1)
    printed = step_print(1, step, module, "PagedAttention.forward_decode")
    assert [{k: v.text for k, v in m.bindings.items()} for m in printed.matches] == [{"ARGS": "query, key_cache"}]


def test_a_captured_run_of_statements_prints_each_line() -> None:
    module = cst.parse_module(DECODE)
    step = Replace(pattern=Pattern.parse("$...HEAD\nreturn out"), code="pass", expect=1)
    (match,) = step_print(1, step, module, "PagedAttention.forward_decode").matches
    assert match.bindings["HEAD"].text == ("use_v1 = max_seq_len <= 8192\nif use_v1:\n"
                                           "    out = ops.paged_attention_v1(query, key_cache)\n"
                                           "else:\n    out = ops.paged_attention_v2(query, key_cache)")
    assert match.code.text == match.bindings["HEAD"].text + "\nreturn out"


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
