"""Comments on code that a ``replace`` removes or reshapes stay where a reader looks for them.

Each test runs a patch the way ``patcher apply`` does and pins the patched
bytes. The rules are in patcher/transforms/splice.py's docstring: a block
left empty gets ``pass`` with the removed code's comments above and beside
it; a line's end-of-line comment stays beside the first line of what
replaced it (a header comment beside the new header), or on its own line
above a replacement that begins with a block.
"""

from __future__ import annotations

import pytest

from tests.fixtures_patches import replace_step


def _case(what: str, steps: str, source: str, patched: str, scope: str = "") -> object:
    """One run of STEPS on SOURCE (searched in SCOPE) that must give PATCHED; WHAT, the test's id, says what it pins."""
    return pytest.param(steps, source, scope, patched, id=what)


_REMOVE_WARNING = replace_step("warnings.warn($...)", "")

# A block the replace leaves empty gets a pass, the removed code's comments above and beside it.
EMPTIED_BLOCKS = [
    _case("the-only-statement-removed-leaves-its-comments-around-the-pass", _REMOVE_WARNING,
          scope="PagedAttention.warn_v2",
          source=("class PagedAttention:\n    @staticmethod\n    def warn_v2():\n"
                  "        # ixformer has no V2 kernel on BI-V100.\n"
                  "        warnings.warn(\"V2 unsupported\")  # TODO(vendor): drop once V2 lands\n"
                  "\n    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 80, 96, 112, 128, 256]\n"),
          patched=("class PagedAttention:\n    @staticmethod\n    def warn_v2():\n"
                   "        # ixformer has no V2 kernel on BI-V100.\n"
                   "        pass  # TODO(vendor): drop once V2 lands\n"
                   "\n    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 80, 96, 112, 128, 256]\n")),
    _case("an-emptied-block-without-comments-is-a-bare-pass", _REMOVE_WARNING, scope="warn_v2",
          source="def warn_v2():\n    warnings.warn(\"V2 unsupported\")\n\n\ndef other():\n    return 1\n",
          patched="def warn_v2():\n    pass\n\n\ndef other():\n    return 1\n"),
    _case("an-emptied-branch-keeps-its-comments-in-a-crlf-file", _REMOVE_WARNING, scope="forward_decode",
          source=("def forward_decode(use_v1, output):\r\n    if use_v1:\r\n        ops.paged_attention_v1(output)\r\n"
                  "    else:\r\n        # Run PagedAttention V2.\r\n"
                  "        warnings.warn(\"no V2 kernel\")  # unreachable here\r\n    return output\r\n"),
          patched=("def forward_decode(use_v1, output):\r\n    if use_v1:\r\n        ops.paged_attention_v1(output)\r\n"
                   "    else:\r\n        # Run PagedAttention V2.\r\n        pass  # unreachable here\r\n"
                   "    return output\r\n")),
    # As for any replaced run: the comment between its statements goes with the code.
    _case("a-removed-run-gives-the-pass-its-first-lines-and-its-last-comment",
          replace_step("torch.cuda.synchronize()\nprint($...)\n", ""), scope="forward_decode",
          source=("def forward_decode(query):\n    if DEBUG:\n\n        # Sync, so that the time is the kernel's.\n"
                  "        torch.cuda.synchronize()  # slow\n"
                  "        print(\"decode\", time.time() - t0)  # remove before release\n    return query\n"),
          patched=("def forward_decode(query):\n    if DEBUG:\n\n        # Sync, so that the time is the kernel's.\n"
                   "        pass  # remove before release\n    return query\n")),
    _case("two-removals-that-empty-one-block-keep-their-comments-in-order",
          replace_step("print($...)", "", expect=2), scope="check",
          source=("def check(block_tables):\n    for row in block_tables:\n        # the first block\n"
                  "        print(row[0])  # [paged_attn DEBUG]\n        # the last block\n"
                  "        print(row[-1])  # [paged_attn DEBUG] too\n    return block_tables\n"),
          patched=("def check(block_tables):\n    for row in block_tables:\n        # the first block\n"
                   "        # [paged_attn DEBUG]\n        # the last block\n"
                   "        pass  # [paged_attn DEBUG] too\n    return block_tables\n")),
    _case("an-emptied-module-keeps-the-comment-as-a-line", replace_step("patch_file($...)", ""),
          source="#!/usr/bin/env python3\n# Patch vLLM's scheduler in place.\n\npatch_file(\"scheduler.py\")  # see patch_ops.sh\n",
          patched="#!/usr/bin/env python3\n# Patch vLLM's scheduler in place.\n\n# see patch_ops.sh\n"),
]


# A replaced line's end-of-line comment stays beside the first new line, or above a new block.
REPLACED_LINES = [
    # Not on the last line, where it would describe the new attribute.
    _case("a-line-turned-into-several-keeps-its-comment-on-the-first",
          replace_step("_PYTORCH_DECODE_THRESHOLD = $OLD",
                       ("_PYTORCH_DECODE_THRESHOLD = 32768\n"
                        "# Set once ops.paged_attention_v2 has failed.\n"
                        "_v2_unavailable = False\n"),
                       scope="PagedAttention"),
          source=("class PagedAttention:\r\n\r\n"
                  "    _PYTORCH_DECODE_THRESHOLD = 32768  # V1 fails past 32K (shared memory)\r\n\r\n"
                  "    @staticmethod\r\n    def forward_decode(query):\r\n        return query\r\n"),
          patched=("class PagedAttention:\r\n\r\n"
                   "    _PYTORCH_DECODE_THRESHOLD = 32768  # V1 fails past 32K (shared memory)\r\n"
                   "    # Set once ops.paged_attention_v2 has failed.\r\n    _v2_unavailable = False\r\n\r\n"
                   "    @staticmethod\r\n    def forward_decode(query):\r\n        return query\r\n")),
    _case("a-line-turned-into-a-block-keeps-its-comment-above-the-block",
          replace_step("use_v1 = True",
                       "if actual_max > 8192 and not PagedAttention._v2_unavailable:\n    use_v1 = False\n"),
          scope="forward_decode",
          source=("def forward_decode(actual_max, max_seq_len):\n"
                  "    # Upstream heuristic.\n    use_v1 = max_seq_len <= 8192\n"
                  "    # BI-V100 override.\n    use_v1 = True  # no V2 kernel on this card\n    return use_v1\n"),
          patched=("def forward_decode(actual_max, max_seq_len):\n"
                   "    # Upstream heuristic.\n    use_v1 = max_seq_len <= 8192\n"
                   "    # BI-V100 override.\n    # no V2 kernel on this card\n"
                   "    if actual_max > 8192 and not PagedAttention._v2_unavailable:\n        use_v1 = False\n"
                   "    return use_v1\n")),
    # The line's comment goes on a line of its own above the block that took the line's place.
    _case("a-commented-line-replaced-by-a-block-puts-its-comment-on-a-line-above",
          replace_step("output = v1(q)", "if use_v2:\n    output = v2(q)\nelse:\n    output = v1(q)\n"), scope="f",
          source="def f(q, use_v2):\n    output = v1(q)  # the vendor kernel\n    return output\n",
          patched=("def f(q, use_v2):\n    # the vendor kernel\n    if use_v2:\n        output = v2(q)\n"
                   "    else:\n        output = v1(q)\n    return output\n")),
    _case("a-block-replaced-by-a-commented-line-keeps-the-comment-above-and-brings-its-own",
          replace_step("if use_v2:\n    output = v2(q)\nelse:\n    output = v1(q)\n",
                       "output = v1(q)  # V2 hangs the card"),
          scope="f",
          source=("def f(q, use_v2):\n    # pick the kernel\n    if use_v2:\n        output = v2(q)\n    else:\n"
                  "        output = v1(q)\n    return output\n"),
          patched=("def f(q, use_v2):\n    # pick the kernel\n    output = v1(q)  # V2 hangs the card\n"
                   "    return output\n")),
    _case("a-replaced-run-keeps-its-last-comment-beside-the-last-line",
          replace_step("use_v1 = $HEURISTIC\nuse_v1 = True\n", "use_v2 = actual_max > 8192\nuse_v1 = not use_v2\n"),
          scope="forward_decode",
          source=("def forward_decode(actual_max, max_seq_len):\n    use_v1 = max_seq_len <= 8192  # upstream\n"
                  "    use_v1 = True  # BI-V100 override\n    return use_v1\n"),
          patched=("def forward_decode(actual_max, max_seq_len):\n    use_v2 = actual_max > 8192\n"
                   "    use_v1 = not use_v2  # BI-V100 override\n    return use_v1\n")),
    _case("a-replaced-run-ending-in-a-block-puts-its-last-comment-above-that-block",
          replace_step("use_v1 = $HEURISTIC\nuse_v1 = True\n",
                       "use_v1 = True\nif actual_max > 8192:\n    use_v1 = False\n"),
          scope="forward_decode",
          source=("def forward_decode(actual_max, max_seq_len):\n    use_v1 = max_seq_len <= 8192\n"
                  "    use_v1 = True  # BI-V100 override\n    return use_v1\n"),
          patched=("def forward_decode(actual_max, max_seq_len):\n    use_v1 = True\n"
                   "    # BI-V100 override\n    if actual_max > 8192:\n        use_v1 = False\n    return use_v1\n")),
    _case("a-comment-moved-above-a-commented-replacement-keeps-the-replacement-s-own-lines",
          replace_step("_PARTITION_SIZE = 512",
                       "# Tuned for the BI-V100's shared memory (patch partition).\n_PARTITION_SIZE = 256  # was 512\n"),
          source="_PARTITION_SIZE = 512  # must match the kernel\nx = 1\n",
          patched=("# Tuned for the BI-V100's shared memory (patch partition).\n"
                   "# must match the kernel\n"
                   "_PARTITION_SIZE = 256  # was 512\nx = 1\n")),
]


# A replaced header's comment stays beside the new header, or goes above code with a comment of its own.
_IF_V1_ELSE_V2 = "if use_v1:\n    $...V1\nelse:\n    $...V2\n"

REPLACED_HEADERS = [
    _case("a-block-turned-into-a-line-keeps-the-header-comment-beside-it",
          replace_step(_IF_V1_ELSE_V2, "ops.paged_attention_v1(output, query)"), scope="forward_decode",
          source=("def forward_decode(output, query, use_v1):\n    if use_v1:  # always, on BI-V100\n"
                  "        ops.paged_attention_v1(output, query)\n    else:\n        ops.paged_attention_v2(output, query)\n"
                  "    return output\n"),
          patched=("def forward_decode(output, query, use_v1):\n"
                   "    ops.paged_attention_v1(output, query)  # always, on BI-V100\n    return output\n")),
    _case("a-header-comment-stays-on-the-new-header",
          replace_step("for $BLK in range(0, $N, $TILE):\n    $...BODY\n",
                       "for $BLK in range(0, $N, $TILE):\n    torch.cuda.synchronize()\n    $...BODY\n"),
          scope="prefill",
          source=("def prefill(num_ctx_blocks):\n"
                  "    for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):  # 32 blocks a tile\n"
                  "        blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)\n"),
          patched=("def prefill(num_ctx_blocks):\n"
                   "    for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):  # 32 blocks a tile\n"
                   "        torch.cuda.synchronize()\n"
                   "        blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)\n")),
    # The kept branch brings its own comment back; the header's goes on a line above it.
    _case("a-header-comment-goes-above-a-block-whose-first-line-has-its-own",
          replace_step(_IF_V1_ELSE_V2, "$...V1"), scope="forward_decode",
          source=("def forward_decode(output, query, use_v1):\n    if use_v1:  # always, on BI-V100\n"
                  "        ops.paged_attention_v1(output, query)  # 11 arguments\n    else:\n"
                  "        ops.paged_attention_v2(output, query)\n    return output\n"),
          patched=("def forward_decode(output, query, use_v1):\n    # always, on BI-V100\n"
                   "    ops.paged_attention_v1(output, query)  # 11 arguments\n    return output\n")),
    _case("a-one-line-if-keeps-its-comment-on-the-new-header",
          replace_step("if seq_lens.numel() == 0: return $OUT",
                       "if seq_lens.numel() == 0:\n    torch.cuda.synchronize()\n    return $OUT\n"),
          scope="forward_decode",
          source=("def forward_decode(output, seq_lens):\n"
                  "    if seq_lens.numel() == 0: return output  # nothing to decode\n    return output\n"),
          patched=("def forward_decode(output, seq_lens):\n    if seq_lens.numel() == 0:  # nothing to decode\n"
                   "        torch.cuda.synchronize()\n        return output\n    return output\n")),
    _case("a-header-comment-goes-above-a-new-header-with-its-own",
          replace_step("match kv_cache_dtype:\n    case \"fp8\":\n        $...\n",
                       ("if kv_cache_dtype != \"auto\":  # fp8 needs the V2 kernel\n"
                        "    raise NotImplementedError(kv_cache_dtype)\n")),
          scope="check",
          source=("def check(kv_cache_dtype):\n    match kv_cache_dtype:  # only auto on BI-V100\n"
                  "        case \"fp8\":\n            raise NotImplementedError(kv_cache_dtype)\n    return kv_cache_dtype\n"),
          patched=("def check(kv_cache_dtype):\n    # only auto on BI-V100\n"
                   "    if kv_cache_dtype != \"auto\":  # fp8 needs the V2 kernel\n"
                   "        raise NotImplementedError(kv_cache_dtype)\n    return kv_cache_dtype\n")),
    _case("a-match-header-comment-stays-beside-the-new-match-header",
          replace_step("match dtype:\n    case \"fp8\":\n        scale = 1.0\n",
                       "match kv_cache_dtype:\n    case \"fp8\":\n        scale = k_scale\n"),
          source='match dtype:  # ixformer: fp8 only\n    case "fp8":\n        scale = 1.0\n',
          patched='match kv_cache_dtype:  # ixformer: fp8 only\n    case "fp8":\n        scale = k_scale\n'),
    _case("a-one-line-block-header-comment-stays-beside-the-new-one-line-block",
          replace_step("if use_v1: return out", "if use_v1 and not alibi: return out"), scope="decode",
          source="def decode(out, use_v1, alibi):\n    if use_v1: return out  # V1 only on BI-V100\n    return None\n",
          patched="def decode(out, use_v1, alibi):\n    if use_v1 and not alibi: return out  # V1 only on BI-V100\n    return None\n"),
]


# A captured statement put back keeps its comments, once.
_HEURISTIC_THEN_OVERRIDE = ("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
                            "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)\n"
                            "    use_v1 = True\n    return use_v1\n")
_KEEP_THE_HEURISTIC = replace_step("$HEURISTIC\nuse_v1 = True\n", "$HEURISTIC")
_PUT_BACK_FP32_SUM = ("def forward(x, out):\n"
                      "    # fp32 accumulate: ixformer's fp16 sum overflows\n"
                      "    out = x.float().sum(-1){comment}\n"
                      "    return out\n")

CAPTURES_PUT_BACK = [
    _case("a-captured-first-statement-keeps-its-comment-lines-once", _KEEP_THE_HEURISTIC, scope="forward_decode",
          source=_HEURISTIC_THEN_OVERRIDE,
          patched=("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
                   "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)\n"
                   "    return use_v1\n")),
    # The run's last comment goes beside the replacement's last line, which is the captured one.
    _case("a-captured-first-statement-takes-the-run-s-last-comment-beside-its-last-line", _KEEP_THE_HEURISTIC,
          scope="forward_decode",
          source=_HEURISTIC_THEN_OVERRIDE.replace("use_v1 = True\n", "use_v1 = True  # BI-V100\n"),
          patched=("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
                   "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)  # BI-V100\n"
                   "    return use_v1\n")),
    _case("a-captured-last-statement-keeps-its-comment-once",
          replace_step("torch.cuda.synchronize()\n$CALL\n", "$CALL"), scope="forward_decode",
          source=("def forward_decode(output, query):\n    torch.cuda.synchronize()  # debug\n"
                  "    ops.paged_attention_v1(output, query)  # the vendor kernel\n    return output\n"),
          patched=("def forward_decode(output, query):\n"
                   "    ops.paged_attention_v1(output, query)  # the vendor kernel\n    return output\n")),
    _case("a-statement-put-back-inside-a-new-block-keeps-its-comment-once",
          replace_step("$S\nreturn out\n", "with torch.no_grad():\n    $S\nreturn out\n"), scope="forward",
          source=_PUT_BACK_FP32_SUM.format(comment="  # (num_seqs,)"),
          patched=("def forward(x, out):\n"
                   "    with torch.no_grad():\n"
                   "        # fp32 accumulate: ixformer's fp16 sum overflows\n"
                   "        out = x.float().sum(-1)  # (num_seqs,)\n"
                   "    return out\n")),
    _case("a-statement-put-back-after-new-code-keeps-its-comment-once-above-itself",
          replace_step("$S\nreturn out\n", "torch.cuda.synchronize()\n$S\nreturn out\n"), scope="forward",
          source=_PUT_BACK_FP32_SUM.format(comment=""),
          patched=("def forward(x, out):\n"
                   "    torch.cuda.synchronize()\n"
                   "    # fp32 accumulate: ixformer's fp16 sum overflows\n"
                   "    out = x.float().sum(-1)\n"
                   "    return out\n")),
]


@pytest.mark.parametrize(("steps", "source", "scope", "patched"),
                         EMPTIED_BLOCKS + REPLACED_LINES + REPLACED_HEADERS + CAPTURES_PUT_BACK)
def test_a_replace_leaves_each_comment_where_a_reader_looks_for_it(  # type: ignore[no-untyped-def]
        apply_steps, steps: str, source: str, scope: str, patched: str) -> None:
    assert apply_steps(steps, source, scope) == patched


def test_a_block_left_empty_gets_pass(apply_steps) -> None:  # type: ignore[no-untyped-def]
    patched = apply_steps(replace_step("warn_once()", ""),
                          "def f():\n    # the vendor's reminder\n    warn_once()\n\n\ndef g():\n    return 1\n", scope="f")
    # The block's only statement goes; its comment stays above the pass (as the tests above pin).
    assert patched.startswith("def f():\n    # the vendor's reminder\n    pass\n\n\ndef g():")
    assert "def g():\n    return 1\n" in patched
