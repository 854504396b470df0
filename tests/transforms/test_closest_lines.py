"""The closest code is named by its lines in the file as read, whatever earlier steps moved or wrote.

``line_mapper`` takes a line of the half-patched file back to the file as
read; ``written_lines`` are the lines earlier steps wrote, which come last
when the closest run is chosen (the pattern was written against the
vendor's code, not the patch's own).
"""

from __future__ import annotations

import libcst as cst

from patcher.transforms.closest import find_closest, line_mapper, written_lines
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern
from patcher.transforms.replace import Replace
from patcher.transforms.scope import find_scope

from tests.transforms.conftest import DECODE, closest_summary


def test_line_mapper_takes_lines_back_and_written_lines_are_the_new_ones() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nNEW1\nNEW2\nb\nc\nD\n"
    back = line_mapper(before, after)
    assert [back(line) for line in range(1, 7)] == [1, 2, 2, 2, 3, 4]
    assert back(99) == 4  # past the end: the last line
    assert written_lines(before, after) == frozenset({2, 3, 6})
    assert written_lines(before, before) == frozenset()


def test_line_mapper_next_to_and_inside_a_rewritten_region() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nB\nB2\nc\nd\n"
    back = line_mapper(before, after)
    assert [back(line) for line in range(1, 6)] == [1, 2, 2, 3, 4]
    assert [back(line, end=True) for line in range(1, 6)] == [1, 2, 2, 3, 4]
    grown = line_mapper("a\nb\nc\n", "a\nb\nX\nY\nc\n")
    assert [grown(line) for line in range(1, 6)] == [1, 2, 3, 3, 3]
    assert [grown(line, end=True) for line in range(1, 6)] == [1, 2, 2, 2, 3]
    # Two lines rewritten as one: it stands for both, from the first to the last.
    shrunk = line_mapper("a\nb\nc\nd\n", "a\nX\nd\n")
    assert [shrunk(line) for line in range(1, 4)] == [1, 2, 4]
    assert [shrunk(line, end=True) for line in range(1, 4)] == [1, 3, 4]
    top = line_mapper("a\n", "X\na\n")
    assert (top(1), top(1, end=True), top(2)) == (1, 1, 1)


def _vendor_file(lines: int) -> str:
    # A long file as vendors write them: blank lines, `del`s and brackets repeat.
    block = "\n    del s\n    x = f(\n        a,\n    )\n"
    return "".join(f"def f{n}():{block}" for n in range(lines // 6))


def test_line_numbers_in_a_long_file_follow_repeated_lines() -> None:
    before = _vendor_file(600)
    after = before.replace("def f50():", "def f50():\n    torch.cuda.synchronize()", 1)
    at = after.splitlines().index("def f90():") + 1
    assert line_mapper(before, after)(at) == at - 1
    assert written_lines(before, after) == frozenset({after.splitlines().index("    torch.cuda.synchronize()") + 1})
    # A step wraps one of the hundred `del s` lines in synchronisations: the
    # `del s` between them is the vendor's line, not one the step wrote.
    after = before.replace("def f2():\n    del s\n",
                           "def f2():\n    torch.cuda.synchronize()\n    del s\n    torch.cuda.synchronize()\n", 1)
    assert written_lines(before, after) == frozenset({12, 14})
    back = line_mapper(before, after)
    assert [back(line) for line in range(11, 16)] == [11, 12, 12, 13, 13]


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


V1_V2 = ("if use_v1:\n    out = ops.paged_attention_v1(query, key_cache, scale)\nelse:\n"
         "    out = ops.paged_attention_v2(query, key_cache)\n")


def _grown(module: cst.Module) -> cst.Module:
    # Two lines above the class, then the V2 call rewritten in place: the `if` is rebuilt.
    grown = Replace(pattern=Pattern.parse("_PARTITION_SIZE = 512"),
                    code="_PARTITION_SIZE = 512\n_EXTRA = 1\n_MORE = 2\n", expect=1).apply(module, "")
    return Replace(pattern=Pattern.parse("out = ops.paged_attention_v2(query, key_cache)"),
                   code="out = ops.paged_attention_v2(query, key_cache, 512)", expect=1).apply(
        grown, "PagedAttention.forward_decode")


def test_a_run_through_rewritten_code_is_named_by_the_lines_as_read() -> None:
    module = cst.parse_module(DECODE)
    grown = _grown(module)
    scope = find_scope(grown, "PagedAttention.forward_decode")
    # The `if` ends on a line the second step wrote: the range still ends at the vendor's line 11.
    as_read = find_closest(Pattern.parse(V1_V2), grown, scope, module)
    assert closest_summary(as_read)[:3] == (8, 11, 1)
    assert closest_summary(find_closest(Pattern.parse(V1_V2), grown, scope))[:3] == (10, 13, 1)
    as_read = find_closest(Pattern.parse("use_v1 = max_seq_len <= 8192\n" + V1_V2), grown, scope, module)
    assert closest_summary(as_read)[:5] == (7, 11, 2, 1, "out = ops.paged_attention_v1(query, key_cache, scale)")


def test_a_run_starting_at_a_block_only_moved_names_the_block_s_first_line() -> None:
    # Lines added above the class: the untouched `if` (vendor lines 8-11) is named from 8.
    module = cst.parse_module(DECODE)
    grown = Replace(pattern=Pattern.parse("_PARTITION_SIZE = 512"),
                    code="_PARTITION_SIZE = 512\n_EXTRA = 1\n_MORE = 2\n", expect=1).apply(module, "")
    scope = find_scope(grown, "PagedAttention.forward_decode")
    assert closest_summary(find_closest(Pattern.parse(V1_V2), grown, scope, module))[:4] == (8, 11, 1, 0)
    assert closest_summary(find_closest(Pattern.parse(V1_V2), grown, scope))[:4] == (10, 13, 1, 0)


def test_a_run_ending_in_added_lines_ends_at_the_vendor_line_before_them() -> None:
    module = cst.parse_module(DECODE)
    grown = Insert(anchor=Pattern.parse("out = ops.paged_attention_v2(query, key_cache)"), position="after",
                   code="torch.cuda.synchronize()\nout = out.contiguous()\n", expect=1).apply(
        module, "PagedAttention.forward_decode")
    as_read = find_closest(Pattern.parse(V1_V2), grown, find_scope(grown, "PagedAttention.forward_decode"), module)
    assert closest_summary(as_read)[:2] == (8, 11)


def test_a_vendor_statement_after_an_inserted_copy_of_itself_keeps_its_line() -> None:
    # One step put a `torch.cuda.synchronize()` above the vendor's own, another
    # rewrote the call after it: a line diff now takes the vendor's line for one
    # the patch wrote, and the added copy for the vendor's. The nodes do not.
    module = cst.parse_module('''\
def forward_decode(query, key_cache):
    output = torch.empty_like(query)
    torch.cuda.synchronize()
    ops.paged_attention_v1(output, query, key_cache)
    return output
''')
    grown = Insert(anchor=Pattern.parse("output = torch.empty_like(query)"), position="after",
                   code="torch.cuda.synchronize()\n", expect=1).apply(module, "forward_decode")
    grown = Replace(pattern=Pattern.parse("ops.paged_attention_v1(output, query, key_cache)"),
                    code="ops.paged_attention_v1(output, query, key_cache, 1.0)", expect=1).apply(
        grown, "forward_decode")
    scope = find_scope(grown, "forward_decode")
    # The vendor's synchronize and the rewritten call: vendor lines 3-4, ranked as the vendor's.
    pattern = Pattern.parse("torch.cuda.synchronize()\nops.paged_attention_v1(output, query, key_cache, 2.0)")
    assert closest_summary(find_closest(pattern, grown, scope, module))[:6] == (
        3, 4, 2, 1, "ops.paged_attention_v1(output, query, key_cache, 2.0)",
        "ops.paged_attention_v1(output, query, key_cache, 1.0)")
    # The added copy, then the vendor's: the run ends on the vendor's line 3.
    pattern = Pattern.parse("torch.cuda.synchronize()\ntorch.cuda.synchronize(query.device)")
    assert closest_summary(find_closest(pattern, grown, scope, module))[:6] == (
        3, 3, 2, 1, "torch.cuda.synchronize(query.device)", "torch.cuda.synchronize()")
