"""Comments on code that a ``replace`` removes or reshapes stay where a reader looks for them.

Each test runs a patch the way ``patcher apply`` does and pins the patched
bytes. The rules are in patcher/transforms/splice.py's docstring: a block
left empty gets ``pass`` with the removed code's comments above and beside
it; a line's end-of-line comment stays beside the first line of what
replaced it (a header comment beside the new header), or on its own line
above a replacement that begins with a block.
"""

from __future__ import annotations

from patcher.patchset.runner import Status

from tests.fixtures_patches import replace_step


def _apply(run_steps, steps: str, source: str, scope: str = "") -> str:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(steps, source, scope)
    assert outcome.status is Status.APPLIED, outcome.detail
    return patched


_REMOVE_WARNING = replace_step("warnings.warn($...)", "")


def test_the_only_statement_removed_leaves_its_comments_around_the_pass(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = ("class PagedAttention:\n    @staticmethod\n    def warn_v2():\n"
              "        # ixformer has no V2 kernel on BI-V100.\n"
              "        warnings.warn(\"V2 unsupported\")  # TODO(vendor): drop once V2 lands\n"
              "\n    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 80, 96, 112, 128, 256]\n")
    patched = _apply(run_steps, _REMOVE_WARNING, source, scope="PagedAttention.warn_v2")
    assert patched == ("class PagedAttention:\n    @staticmethod\n    def warn_v2():\n"
                       "        # ixformer has no V2 kernel on BI-V100.\n"
                       "        pass  # TODO(vendor): drop once V2 lands\n"
                       "\n    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 80, 96, 112, 128, 256]\n")


def test_an_emptied_block_without_comments_is_a_bare_pass(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def warn_v2():\n    warnings.warn(\"V2 unsupported\")\n\n\ndef other():\n    return 1\n"
    patched = _apply(run_steps, _REMOVE_WARNING, source, scope="warn_v2")
    assert patched == "def warn_v2():\n    pass\n\n\ndef other():\n    return 1\n"


def test_an_emptied_branch_keeps_its_comments_in_a_crlf_file(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = ("def forward_decode(use_v1, output):\r\n    if use_v1:\r\n        ops.paged_attention_v1(output)\r\n"
              "    else:\r\n        # Run PagedAttention V2.\r\n"
              "        warnings.warn(\"no V2 kernel\")  # unreachable here\r\n    return output\r\n")
    patched = _apply(run_steps, _REMOVE_WARNING, source, scope="forward_decode")
    assert patched == ("def forward_decode(use_v1, output):\r\n    if use_v1:\r\n        ops.paged_attention_v1(output)\r\n"
                       "    else:\r\n        # Run PagedAttention V2.\r\n        pass  # unreachable here\r\n"
                       "    return output\r\n")


def test_a_removed_run_gives_the_pass_its_first_lines_and_its_last_comment(run_steps) -> None:  # type: ignore[no-untyped-def]
    # As for any replaced run: the comment between its statements goes with the code.
    steps = replace_step("torch.cuda.synchronize()\nprint($...)\n", "")
    source = ("def forward_decode(query):\n    if DEBUG:\n\n        # Sync, so that the time is the kernel's.\n"
              "        torch.cuda.synchronize()  # slow\n"
              "        print(\"decode\", time.time() - t0)  # remove before release\n    return query\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(query):\n    if DEBUG:\n\n        # Sync, so that the time is the kernel's.\n"
                       "        pass  # remove before release\n    return query\n")


def test_two_removals_that_empty_one_block_keep_their_comments_in_order(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("print($...)", "", expect=2)
    source = ("def check(block_tables):\n    for row in block_tables:\n        # the first block\n"
              "        print(row[0])  # [paged_attn DEBUG]\n        # the last block\n"
              "        print(row[-1])  # [paged_attn DEBUG] too\n    return block_tables\n")
    patched = _apply(run_steps, steps, source, scope="check")
    assert patched == ("def check(block_tables):\n    for row in block_tables:\n        # the first block\n"
                       "        # [paged_attn DEBUG]\n        # the last block\n"
                       "        pass  # [paged_attn DEBUG] too\n    return block_tables\n")


def test_an_emptied_module_keeps_the_comment_as_a_line(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("patch_file($...)", "")
    source = "#!/usr/bin/env python3\n# Patch vLLM's scheduler in place.\n\npatch_file(\"scheduler.py\")  # see patch_ops.sh\n"
    patched = _apply(run_steps, steps, source)
    assert patched == "#!/usr/bin/env python3\n# Patch vLLM's scheduler in place.\n\n# see patch_ops.sh\n"


def test_a_block_left_empty_gets_pass(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("warn_once()", "")
    source = "def f():\n    # the vendor's reminder\n    warn_once()\n\n\ndef g():\n    return 1\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    # The block's only statement goes; its comment stays above the pass (as the tests above pin).
    assert patched.startswith("def f():\n    # the vendor's reminder\n    pass\n\n\ndef g():")
    assert "def g():\n    return 1\n" in patched


def test_a_line_turned_into_several_keeps_its_comment_on_the_first(run_steps) -> None:  # type: ignore[no-untyped-def]
    # Not on the last line, where it would describe the new attribute.
    steps = replace_step(
        "_PYTORCH_DECODE_THRESHOLD = $OLD",
        ("_PYTORCH_DECODE_THRESHOLD = 32768\n"
         "# Set once ops.paged_attention_v2 has failed.\n"
         "_v2_unavailable = False\n"),
        scope="PagedAttention")
    source = ("class PagedAttention:\r\n\r\n"
              "    _PYTORCH_DECODE_THRESHOLD = 32768  # V1 fails past 32K (shared memory)\r\n\r\n"
              "    @staticmethod\r\n    def forward_decode(query):\r\n        return query\r\n")
    patched = _apply(run_steps, steps, source)
    assert patched == ("class PagedAttention:\r\n\r\n"
                       "    _PYTORCH_DECODE_THRESHOLD = 32768  # V1 fails past 32K (shared memory)\r\n"
                       "    # Set once ops.paged_attention_v2 has failed.\r\n    _v2_unavailable = False\r\n\r\n"
                       "    @staticmethod\r\n    def forward_decode(query):\r\n        return query\r\n")


def test_a_line_turned_into_a_block_keeps_its_comment_above_the_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "use_v1 = True",
        "if actual_max > 8192 and not PagedAttention._v2_unavailable:\n    use_v1 = False\n")
    source = ("def forward_decode(actual_max, max_seq_len):\n"
              "    # Upstream heuristic.\n    use_v1 = max_seq_len <= 8192\n"
              "    # BI-V100 override.\n    use_v1 = True  # no V2 kernel on this card\n    return use_v1\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(actual_max, max_seq_len):\n"
                       "    # Upstream heuristic.\n    use_v1 = max_seq_len <= 8192\n"
                       "    # BI-V100 override.\n    # no V2 kernel on this card\n"
                       "    if actual_max > 8192 and not PagedAttention._v2_unavailable:\n        use_v1 = False\n"
                       "    return use_v1\n")


def test_a_block_turned_into_a_line_keeps_the_header_comment_beside_it(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("if use_v1:\n    $...V1\nelse:\n    $...V2\n", "ops.paged_attention_v1(output, query)")
    source = ("def forward_decode(output, query, use_v1):\n    if use_v1:  # always, on BI-V100\n"
              "        ops.paged_attention_v1(output, query)\n    else:\n        ops.paged_attention_v2(output, query)\n"
              "    return output\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(output, query, use_v1):\n"
                       "    ops.paged_attention_v1(output, query)  # always, on BI-V100\n    return output\n")


def test_a_header_comment_stays_on_the_new_header(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "for $BLK in range(0, $N, $TILE):\n    $...BODY\n",
        "for $BLK in range(0, $N, $TILE):\n    torch.cuda.synchronize()\n    $...BODY\n")
    source = ("def prefill(num_ctx_blocks):\n"
              "    for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):  # 32 blocks a tile\n"
              "        blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)\n")
    patched = _apply(run_steps, steps, source, scope="prefill")
    assert patched == ("def prefill(num_ctx_blocks):\n"
                       "    for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):  # 32 blocks a tile\n"
                       "        torch.cuda.synchronize()\n"
                       "        blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)\n")


def test_a_header_comment_goes_above_a_block_whose_first_line_has_its_own(run_steps) -> None:  # type: ignore[no-untyped-def]
    # The kept branch brings its own comment back; the header's goes on a line above it.
    steps = replace_step("if use_v1:\n    $...V1\nelse:\n    $...V2\n", "$...V1")
    source = ("def forward_decode(output, query, use_v1):\n    if use_v1:  # always, on BI-V100\n"
              "        ops.paged_attention_v1(output, query)  # 11 arguments\n    else:\n"
              "        ops.paged_attention_v2(output, query)\n    return output\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(output, query, use_v1):\n    # always, on BI-V100\n"
                       "    ops.paged_attention_v1(output, query)  # 11 arguments\n    return output\n")


def test_a_commented_line_replaced_by_a_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("output = v1(q)", "if use_v2:\n    output = v2(q)\nelse:\n    output = v1(q)\n")
    source = "def f(q, use_v2):\n    output = v1(q)  # the vendor kernel\n    return output\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    # The line's comment goes on a line of its own above the block that took the line's place.
    assert patched == ("def f(q, use_v2):\n    # the vendor kernel\n    if use_v2:\n        output = v2(q)\n"
                       "    else:\n        output = v1(q)\n    return output\n")


def test_a_block_replaced_by_a_commented_line(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "if use_v2:\n    output = v2(q)\nelse:\n    output = v1(q)\n",
        "output = v1(q)  # V2 hangs the card")
    source = ("def f(q, use_v2):\n    # pick the kernel\n    if use_v2:\n        output = v2(q)\n    else:\n"
              "        output = v1(q)\n    return output\n")
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(q, use_v2):\n    # pick the kernel\n    output = v1(q)  # V2 hangs the card\n"
                       "    return output\n")


def test_a_captured_first_statement_keeps_its_comment_lines_once(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("$HEURISTIC\nuse_v1 = True\n", "$HEURISTIC")
    source = ("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
              "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)\n"
              "    use_v1 = True\n    return use_v1\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
                       "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)\n"
                       "    return use_v1\n")
    # The run's last comment goes beside the replacement's last line, which is the captured one.
    patched = _apply(run_steps, steps, source.replace("use_v1 = True\n", "use_v1 = True  # BI-V100\n"),
                     scope="forward_decode")
    assert patched == ("def forward_decode(max_seq_len, max_num_partitions):\n    # Upstream heuristic.\n"
                       "    use_v1 = (max_seq_len <= 8192 and\n              max_num_partitions == 1)  # BI-V100\n"
                       "    return use_v1\n")


def test_a_captured_last_statement_keeps_its_comment_once(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("torch.cuda.synchronize()\n$CALL\n", "$CALL")
    source = ("def forward_decode(output, query):\n    torch.cuda.synchronize()  # debug\n"
              "    ops.paged_attention_v1(output, query)  # the vendor kernel\n    return output\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(output, query):\n"
                       "    ops.paged_attention_v1(output, query)  # the vendor kernel\n    return output\n")


def test_a_replaced_run_keeps_its_last_comment_beside_the_last_line(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("use_v1 = $HEURISTIC\nuse_v1 = True\n", "use_v2 = actual_max > 8192\nuse_v1 = not use_v2\n")
    source = ("def forward_decode(actual_max, max_seq_len):\n    use_v1 = max_seq_len <= 8192  # upstream\n"
              "    use_v1 = True  # BI-V100 override\n    return use_v1\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(actual_max, max_seq_len):\n    use_v2 = actual_max > 8192\n"
                       "    use_v1 = not use_v2  # BI-V100 override\n    return use_v1\n")


def test_a_replaced_run_ending_in_a_block_puts_its_last_comment_above_that_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "use_v1 = $HEURISTIC\nuse_v1 = True\n",
        "use_v1 = True\nif actual_max > 8192:\n    use_v1 = False\n")
    source = ("def forward_decode(actual_max, max_seq_len):\n    use_v1 = max_seq_len <= 8192\n"
              "    use_v1 = True  # BI-V100 override\n    return use_v1\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(actual_max, max_seq_len):\n    use_v1 = True\n"
                       "    # BI-V100 override\n    if actual_max > 8192:\n        use_v1 = False\n    return use_v1\n")


def test_a_one_line_if_keeps_its_comment_on_the_new_header(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "if seq_lens.numel() == 0: return $OUT",
        "if seq_lens.numel() == 0:\n    torch.cuda.synchronize()\n    return $OUT\n")
    source = ("def forward_decode(output, seq_lens):\n"
              "    if seq_lens.numel() == 0: return output  # nothing to decode\n    return output\n")
    patched = _apply(run_steps, steps, source, scope="forward_decode")
    assert patched == ("def forward_decode(output, seq_lens):\n    if seq_lens.numel() == 0:  # nothing to decode\n"
                       "        torch.cuda.synchronize()\n        return output\n    return output\n")


def test_a_header_comment_goes_above_a_new_header_with_its_own(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "match kv_cache_dtype:\n    case \"fp8\":\n        $...\n",
        ("if kv_cache_dtype != \"auto\":  # fp8 needs the V2 kernel\n"
         "    raise NotImplementedError(kv_cache_dtype)\n"))
    source = ("def check(kv_cache_dtype):\n    match kv_cache_dtype:  # only auto on BI-V100\n"
              "        case \"fp8\":\n            raise NotImplementedError(kv_cache_dtype)\n    return kv_cache_dtype\n")
    patched = _apply(run_steps, steps, source, scope="check")
    assert patched == ("def check(kv_cache_dtype):\n    # only auto on BI-V100\n"
                       "    if kv_cache_dtype != \"auto\":  # fp8 needs the V2 kernel\n"
                       "        raise NotImplementedError(kv_cache_dtype)\n    return kv_cache_dtype\n")


def test_a_match_header_comment_stays_beside_the_new_match_header(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "match dtype:\n    case \"fp8\":\n        scale = 1.0\n",
        "match kv_cache_dtype:\n    case \"fp8\":\n        scale = k_scale\n")
    source = ('match dtype:  # ixformer: fp8 only\n    case "fp8":\n        scale = 1.0\n')
    assert _apply(run_steps, steps, source) == (
        'match kv_cache_dtype:  # ixformer: fp8 only\n    case "fp8":\n        scale = k_scale\n')


def test_a_one_line_block_header_comment_stays_beside_the_new_one_line_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("if use_v1: return out", "if use_v1 and not alibi: return out")
    source = "def decode(out, use_v1, alibi):\n    if use_v1: return out  # V1 only on BI-V100\n    return None\n"
    assert _apply(run_steps, steps, source, scope="decode") == (
        "def decode(out, use_v1, alibi):\n    if use_v1 and not alibi: return out  # V1 only on BI-V100\n    return None\n")


def test_a_comment_moved_above_a_commented_replacement_keeps_the_replacement_s_own_lines(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step(
        "_PARTITION_SIZE = 512",
        "# Tuned for the BI-V100's shared memory (patch partition).\n_PARTITION_SIZE = 256  # was 512\n")
    source = "_PARTITION_SIZE = 512  # must match the kernel\nx = 1\n"
    assert _apply(run_steps, steps, source) == (
        "# Tuned for the BI-V100's shared memory (patch partition).\n"
        "# must match the kernel\n"
        "_PARTITION_SIZE = 256  # was 512\nx = 1\n")


def test_a_statement_put_back_inside_a_new_block_keeps_its_comment_once(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("$S\nreturn out\n", "with torch.no_grad():\n    $S\nreturn out\n")
    source = ("def forward(x, out):\n"
              "    # fp32 accumulate: ixformer's fp16 sum overflows\n"
              "    out = x.float().sum(-1)  # (num_seqs,)\n"
              "    return out\n")
    assert _apply(run_steps, steps, source, scope="forward") == (
        "def forward(x, out):\n"
        "    with torch.no_grad():\n"
        "        # fp32 accumulate: ixformer's fp16 sum overflows\n"
        "        out = x.float().sum(-1)  # (num_seqs,)\n"
        "    return out\n")


def test_a_statement_put_back_after_new_code_keeps_its_comment_once_above_itself(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = replace_step("$S\nreturn out\n", "torch.cuda.synchronize()\n$S\nreturn out\n")
    source = ("def forward(x, out):\n"
              "    # fp32 accumulate: ixformer's fp16 sum overflows\n"
              "    out = x.float().sum(-1)\n"
              "    return out\n")
    assert _apply(run_steps, steps, source, scope="forward") == (
        "def forward(x, out):\n"
        "    torch.cuda.synchronize()\n"
        "    # fp32 accumulate: ixformer's fp16 sum overflows\n"
        "    out = x.float().sum(-1)\n"
        "    return out\n")
