# PagedAttention ops for the BI-V100 (Qwen3.6 bring-up).
#
# Forked from vllm/attention/ops/paged_attn.py (vLLM 0.6.x). Installed over
# the base image's copy by patch_ops.sh. Differences from upstream:
#   * prefill never calls the Triton context_attention_fwd kernel; it runs
#     the tiled PyTorch path in _forward_prefix_pytorch instead.
#   * decode falls back to a PyTorch path for very long contexts, where the
#     native V1 kernel runs out of shared memory.
#   * V1 is forced: the native V2 kernel is not built for this card.
#
# Bring-up notes:
#   2026-09  first drop: prefill moved off Triton after the card hung twice
#            in the 8K-context soak test.
#   2026-10  decode: PyTorch path past _PYTORCH_DECODE_THRESHOLD tokens
#            (V1 failed to launch at 40K tokens in the long-context test).
#            Context tiles of 32 blocks keep the prefill score matrix
#            small enough for the 32 GB card.
#   The file must stay importable on the base image's Python 3.10.
from dataclasses import dataclass
from typing import List, Optional, Tuple
import sys
import traceback

import torch

from vllm import _custom_ops as ops

# from vllm.attention.ops.prefix_prefill import context_attention_fwd
# NOTE: do not re-enable. The Triton context_attention_fwd kernel hangs the
# BI-V100 card permanently (no error, no timeout; the card only comes back
# after a host reboot). Prefill goes through _forward_prefix_pytorch below.

# Should be the same as PARTITION_SIZE in `paged_attention_v2_launcher`.
_PARTITION_SIZE = 512


@dataclass
class PagedAttentionMetadata:
    """Metadata for PagedAttention."""
    # (batch_size,). Tokens seen so far by each sequence.
    seq_lens_tensor: Optional[torch.Tensor]
    # Longest sequence among the decodes; 0 for a prefill-only batch.
    max_decode_seq_len: int
    # (batch_size, max_blocks_per_seq).
    # Physical block ids of each sequence, in token order: [7, 2, 9] keeps
    # tokens 0..bs-1 in block 7, the next bs in block 2, and so on. Rows are
    # padded to max_blocks_per_seq when cuda graphs are captured.
    block_tables: Optional[torch.Tensor]


class PagedAttention:
    # Static helpers only: vllm's backends call PagedAttention.<op>(...)
    # directly. Installed over vllm/attention/ops/paged_attn.py by
    # patch_ops.sh; the copy at the root of the vendor tree is older and is
    # not installed.

    @staticmethod
    def get_supported_head_sizes() -> List[int]:
        # 256: Qwen3.x full-attention layers.
        return [64, 80, 96, 112, 120, 128, 192, 256]

    @staticmethod
    def get_kv_cache_shape(
        num_blocks: int,
        block_size: int,
        num_kv_heads: int,
        head_size: int,
    ) -> Tuple[int, ...]:
        return (2, num_blocks, block_size * num_kv_heads * head_size)

    @staticmethod
    def split_kv_cache(
        kv_cache: torch.Tensor,
        num_kv_heads: int,
        head_size: int,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        # The key cache packs x = 16 bytes of a head's dims together so the
        # kernel reads keys with 16-byte loads:
        #   key_cache   [num_blocks, kv_heads, head_size // x, block_size, x]
        #   value_cache [num_blocks, kv_heads, head_size, block_size]
        # (x = 8 for fp16/bf16, 4 for fp32). The PyTorch paths below undo
        # this layout with permute + view.
        x = 16 // kv_cache.element_size()
        num_blocks = kv_cache.shape[1]

        key_cache = kv_cache[0]
        key_cache = key_cache.view(num_blocks, num_kv_heads, head_size // x,
                                   -1, x)
        value_cache = kv_cache[1]
        value_cache = value_cache.view(num_blocks, num_kv_heads, head_size, -1)
        return key_cache, value_cache

    @staticmethod
    def write_to_paged_cache(
        key: torch.Tensor,
        value: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        slot_mapping: torch.Tensor,
        kv_cache_dtype: str,
        k_scale: float,
        v_scale: float,
    ) -> None:
        # Native op (ixformer build); writes the new tokens' K/V into the
        # slots the scheduler assigned. k_scale/v_scale only matter for fp8
        # caches, which this card does not use.
        ops.reshape_and_cache(
            key,
            value,
            key_cache,
            value_cache,
            slot_mapping.flatten(),
            kv_cache_dtype,
            k_scale,
            v_scale,
        )

    @staticmethod
    def _forward_decode_pytorch(
        query: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        block_tables: torch.Tensor,
        seq_lens: torch.Tensor,
        scale: float,
    ) -> torch.Tensor:
        """Decode attention in plain PyTorch, one sequence at a time.

        Used when a context is too long for the native V1 kernel. Gathers
        the whole context of each sequence from the paged cache and runs a
        plain softmax in fp32, so memory grows with the context length.

        Slow (one sequence at a time, no fused kernel), but it is only used
        past _PYTORCH_DECODE_THRESHOLD tokens, where V1 cannot run at all.
        """
        num_seqs, num_heads, head_size = query.shape
        num_kv_heads = value_cache.shape[1]
        block_size = value_cache.shape[3]
        gqa_ratio = num_heads // num_kv_heads
        output = torch.empty_like(query)

        for i in range(num_seqs):
            seq_len = int(seq_lens[i].item())
            if seq_len <= 0:
                output[i].zero_()
                continue
            num_blocks = (seq_len + block_size - 1) // block_size
            blk_ids = block_tables[i, :num_blocks]
            # key_cache: [num_blocks, kv_heads, head_size // x, block_size, x]
            keys = (key_cache[blk_ids]
                    .permute(0, 3, 1, 2, 4)
                    .contiguous()
                    .view(-1, num_kv_heads, head_size))[:seq_len]
            # value_cache: [num_blocks, kv_heads, head_size, block_size]
            values = (value_cache[blk_ids]
                      .permute(0, 3, 1, 2)
                      .contiguous()
                      .view(-1, num_kv_heads, head_size))[:seq_len]

            # [kv_heads, gqa, head_size] x [kv_heads, head_size, seq_len]
            q = query[i].reshape(num_kv_heads, gqa_ratio, head_size).float()
            scores = torch.matmul(q, keys.permute(1, 2, 0).float()) * scale
            probs = torch.softmax(scores, dim=-1)
            out = torch.matmul(probs, values.permute(1, 0, 2).float())
            output[i] = out.reshape(num_heads, head_size).to(query.dtype)
        return output

    # V1 fails for long contexts on BI-V100 (the kernel keeps the logits of
    # a whole sequence in shared memory). Above this length decode goes
    # through _forward_decode_pytorch.
    _PYTORCH_DECODE_THRESHOLD = 32768
    # Set once ops.paged_attention_v2 has failed: this build has no V2 kernel,
    # so it is not tried again in this process (patch three-tier-decode).
    _v2_unavailable = False

    @staticmethod
    def forward_decode(
        query: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        block_tables: torch.Tensor,
        seq_lens: torch.Tensor,
        max_seq_len: int,
        kv_cache_dtype: str,
        num_kv_heads: int,
        scale: float,
        alibi_slopes: Optional[torch.Tensor],
        k_scale: float,
        v_scale: float,
        tp_rank: int = 0,
        blocksparse_local_blocks: int = 0,
        blocksparse_vert_stride: int = 0,
        blocksparse_block_size: int = 64,
        blocksparse_head_sliding_step: int = 0,
    ) -> torch.Tensor:
        # max_seq_len is the scheduler's padded bound (under CUDA graphs it
        # is the capture size, not the batch's); look at the real one, or
        # every graph-captured batch would take the slow path.
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(
                query, key_cache, value_cache, block_tables, seq_lens, scale)

        if blocksparse_vert_stride is not None and blocksparse_vert_stride > 1:
            # use blocksparse paged attention
            block_size = value_cache.size(-1)
            assert (blocksparse_block_size > 0 and
                    blocksparse_block_size % block_size == 0), \
                (f"{blocksparse_block_size=} needs to be a multiple of"
                 f"{block_size=} used in block_tables.")

        output = torch.empty_like(query)
        block_size = value_cache.shape[3]
        num_seqs, num_heads, head_size = query.shape
        max_num_partitions = ((max_seq_len + _PARTITION_SIZE - 1) //
                              _PARTITION_SIZE)
        # Heuristic: V1 when a single partition covers the context (no
        # reduction step needed) or when sequences x heads already give the
        # device enough parallel work. Past 8192 tokens V1 runs short of
        # shared memory, so V2 is used there.
        # Three tiers on actual_max, the real longest sequence (patch
        # three-tier-decode): V1 up to 8192 tokens, then V2, which
        # falls back to V1 for good if this build has no V2 kernel.
        # Past _PYTORCH_DECODE_THRESHOLD the PyTorch path above has returned.
        use_v2 = actual_max > 8192 and not PagedAttention._v2_unavailable
        if use_v2:
            try:
                # Run PagedAttention V2.
                assert _PARTITION_SIZE % block_size == 0
                tmp_output = torch.empty(
                    size=(num_seqs, num_heads, max_num_partitions, head_size),
                    dtype=output.dtype,
                    device=output.device,
                )
                exp_sums = torch.empty(
                    size=(num_seqs, num_heads, max_num_partitions),
                    dtype=torch.float32,
                    device=output.device,
                )
                max_logits = torch.empty_like(exp_sums)
                ops.paged_attention_v2(
                    output,
                    exp_sums,
                    max_logits,
                    tmp_output,
                    query,
                    key_cache,
                    value_cache,
                    num_kv_heads,
                    scale,
                    block_tables,
                    seq_lens,
                    block_size,
                    max_seq_len,
                    alibi_slopes,
                    kv_cache_dtype,
                    k_scale,
                    v_scale,
                    tp_rank,
                    blocksparse_local_blocks,
                    blocksparse_vert_stride,
                    blocksparse_block_size,
                    blocksparse_head_sliding_step,
                )
            except (NotImplementedError, RuntimeError):
                PagedAttention._v2_unavailable = True
                use_v2 = False
        if not use_v2:
            # Run PagedAttention V1.
            ops.paged_attention_v1(
                output,
                query,
                key_cache,
                value_cache,
                num_kv_heads,
                scale,
                block_tables,
                seq_lens,
                block_size,
                max_seq_len,
                alibi_slopes,
            )
        return output

    @staticmethod
    def forward_prefix(
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache_dtype: str,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        block_tables: torch.Tensor,
        query_start_loc: torch.Tensor,
        seq_lens_tensor: torch.Tensor,
        context_lens: torch.Tensor,
        max_query_len: int,
        alibi_slopes: Optional[torch.Tensor],
        sliding_window: Optional[int],
        k_scale: float,
        v_scale: float,
    ) -> torch.Tensor:
        # query/key/value: the new tokens of the whole batch, packed along the
        #   first axis ([num_tokens, heads, head_dim]); key/value are already
        #   written to key_cache/value_cache by write_to_paged_cache.
        # block_tables: [batch, max_blocks], the physical blocks of each
        #   sequence in token order (context first, then the new tokens).
        # query_start_loc: [batch + 1], prefix sums of the query lengths.
        # context_lens: [batch], tokens already cached before this step
        #   (0 for a fresh prompt; > 0 with prefix caching or chunked
        #   prefill).
        #
        # BI-V100: context_attention_fwd (Triton) hangs the card, see the
        # NOTE at the top of this file. alibi_slopes and sliding_window are
        # not used by Qwen3.x and are ignored here.
        return PagedAttention._forward_prefix_pytorch(
            query, key, value, key_cache, value_cache, block_tables,
            query_start_loc, seq_lens_tensor, context_lens)

    @staticmethod
    def _forward_prefix_pytorch(
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        block_tables: torch.Tensor,
        query_start_loc: torch.Tensor,
        seq_lens_tensor: torch.Tensor,
        context_lens: torch.Tensor,
    ) -> torch.Tensor:
        # Prefix-prefill attention in PyTorch (flash-attention style).
        #
        # query/key/value hold the new tokens of every sequence, packed:
        #   query [num_tokens, num_q_heads, head_dim]
        #   key   [num_tokens, num_kv_heads, head_dim]
        # Sequence i owns rows query_start_loc[i]:query_start_loc[i + 1].
        # Its first context_lens[i] tokens are already in the paged cache.
        #
        # The context is read from the cache in tiles of _BLOCKS_PER_TILE
        # blocks and folded into an online softmax, so the full score
        # matrix of a 32K-token context is never materialised. Then the new
        # tokens attend to themselves with a causal mask.
        #
        # Online softmax, per query row: keep the running max m, the running
        # sum l of exp(s - m) and the running output o = sum exp(s - m) v.
        # For each new tile of scores s:
        #   m_new = max(m, max(s))
        #   corr  = exp(m - m_new)        (rescales what was summed so far)
        #   l     = l * corr + sum(exp(s - m_new))
        #   o     = o * corr + exp(s - m_new) @ v
        # and at the end out = o / l. Everything is accumulated in fp32
        # whatever the cache dtype.
        try:
            _BLOCKS_PER_TILE = 32

            batch_size   = query_start_loc.shape[0] - 1
            num_q_heads  = query.shape[1]
            num_kv_heads = key.shape[1]
            head_dim     = query.shape[2]
            gqa_ratio    = num_q_heads // num_kv_heads
            block_size   = value_cache.shape[3]
            tile_sz      = _BLOCKS_PER_TILE * block_size
            scale        = 1.0 / (head_dim ** 0.5)
            orig_dtype   = query.dtype
            output       = torch.empty_like(query)
            dev          = query.device

            for i in range(batch_size):
                ctx_len = int(context_lens[i].item())
                q_start = int(query_start_loc[i].item())
                q_end   = int(query_start_loc[i + 1].item())
                q_len   = q_end - q_start

                q_i = query[q_start:q_end]   # [q_len, num_q_heads, head_dim]
                k_i = key[q_start:q_end]     # [q_len, num_kv_heads, head_dim]
                v_i = value[q_start:q_end]

                # Query head h reads kv head h // gqa_ratio, so splitting the
                # head axis into (kv_heads, gqa) lines every query head up
                # with its kv head.
                # [q_len, q_heads, d] -> [q_heads, q_len, d]
                #                     -> [kv_heads, gqa, q_len, d], fp32
                # Scaled once here, so the score matmuls need no multiply.
                q_seq = (q_i.permute(1, 0, 2)
                         .float()
                         .view(num_kv_heads, gqa_ratio, q_len, head_dim)
                         .mul_(scale))

                # Online softmax state: running max, running sum, output.
                m = torch.full((num_kv_heads, gqa_ratio, q_len), float('-inf'),
                               dtype=torch.float32, device=dev)
                l = torch.zeros_like(m)
                o = torch.zeros((num_kv_heads, gqa_ratio, q_len, head_dim),
                                dtype=torch.float32, device=dev)
                # Online-softmax scratch, allocated once per sequence;
                # every update below writes it with out= (patch
                # prefix-buffer-reuse).
                _m_blk = torch.empty_like(m)
                _m_new = torch.empty_like(m)
                _corr = torch.empty_like(m)

                # ---- Phase 1: the cached context, tile by tile ----
                if ctx_len > 0:
                    num_ctx_blocks = (ctx_len + block_size - 1) // block_size
                    # Seen once with a stale block table after preemption:
                    # warn and read what is there rather than index past it.
                    if num_ctx_blocks > block_tables.shape[1]:
                        print(f"[paged_attn WARNING] seq {i}: context of "
                              f"{ctx_len} tokens needs {num_ctx_blocks} "
                              f"blocks, block_tables has "
                              f"{block_tables.shape[1]}; truncating",
                              file=sys.stderr, flush=True)
                        num_ctx_blocks = block_tables.shape[1]

                    # Gather the context in groups of whole tiles of at most
                    # max_gather_tokens tokens (0: the whole context in one group),
                    # one gather per group; each tile slices its group. Same elements
                    # in the same layout as per-tile gathers, so the same bits; the
                    # extra memory is one group, whatever the context length (patch
                    # prefix-pregather).
                    max_gather_tokens = 0
                    if max_gather_tokens > 0:
                        grp_tiles = max(1, max_gather_tokens // (_BLOCKS_PER_TILE * block_size))
                        grp_blks = grp_tiles * _BLOCKS_PER_TILE
                    else:
                        grp_blks = num_ctx_blocks
                    k_grp = v_grp = None

                    # print(f"[paged_attn DEBUG] seq {i} ctx {ctx_len} "
                    #       f"blocks {num_ctx_blocks} q_len {q_len}")
                    # NOTE: gather per tile, not the whole context at once:
                    # the whole-context version ran the card out of memory at
                    # 64K context with several prefills in flight.
                    for tile_blk in range(0, num_ctx_blocks, _BLOCKS_PER_TILE):
                        blk_end = min(tile_blk + _BLOCKS_PER_TILE, num_ctx_blocks)
                        blk_ids = block_tables[i, tile_blk:blk_end]
                        if tile_blk % grp_blks == 0:
                            # First tile of a group: drop the previous group, then
                            # gather this one as [tokens, kv_heads, head_dim].
                            k_grp = v_grp = None
                            grp_blk = tile_blk
                            grp_end = min(grp_blk + grp_blks, num_ctx_blocks)
                            grp_ids = block_tables[i, grp_blk:grp_end]
                            k_grp = (key_cache[grp_ids]
                                     .permute(0, 3, 1, 2, 4)
                                     .contiguous()
                                     .view(-1, num_kv_heads, head_dim))
                            v_grp = (value_cache[grp_ids]
                                     .permute(0, 3, 1, 2)
                                     .contiguous()
                                     .view(-1, num_kv_heads, head_dim))

                        # key_cache: [blocks, kv_heads, head_dim // x, block_size, x]
                        # Move block_size next to the block axis so that the
                        # flat view lists tokens in order.
                        k_tile = k_grp[(tile_blk - grp_blk) * block_size:(blk_end - grp_blk) * block_size]
                        # -> [tile_tokens, kv_heads, head_dim]

                        # value_cache: [blocks, kv_heads, head_dim, block_size]
                        v_tile = v_grp[(tile_blk - grp_blk) * block_size:(blk_end - grp_blk) * block_size]
                        # -> [tile_tokens, kv_heads, head_dim]

                        # The last block of the context is usually partial.
                        valid = (min(blk_end * block_size, ctx_len)
                                 - tile_blk * block_size)
                        k_tile = k_tile[:valid]
                        v_tile = v_tile[:valid]

                        # k_t [kv_heads, 1, head_dim, valid]
                        # v_t [kv_heads, 1, valid, head_dim]
                        k_t = k_tile.permute(1, 0, 2).unsqueeze(1).transpose(-2, -1).float()
                        v_t = v_tile.permute(1, 0, 2).unsqueeze(1).float()
                        del k_tile, v_tile

                        s = torch.matmul(q_seq, k_t)   # [kv, gqa, q_len, valid]
                        del k_t

                        torch.amax(s, dim=-1, out=_m_blk)
                        torch.maximum(m, _m_blk, out=_m_new)
                        exp_s = s - _m_new.unsqueeze(-1)
                        del s
                        exp_s.exp_()
                        torch.exp(m - _m_new, out=_corr)
                        m.copy_(_m_new)
                        l.mul_(_corr).add_(exp_s.sum(dim=-1))
                        o.mul_(_corr.unsqueeze(-1)).add_(
                            torch.matmul(exp_s, v_t))
                        del exp_s, v_t
                    del k_grp, v_grp  # the last group is not needed past the context

                # ---- Phase 2: the new tokens, causal ----
                # Every row sees key 0 of the first tile, so m is finite
                # after it and fully masked rows of later tiles add zero.
                # Same tile size as phase 1, so one tile's scores stay at
                # [kv_heads, gqa, q_len, tile_sz] however long the chunk.
                for kc_start in range(0, q_len, tile_sz):
                    kc_end = min(kc_start + tile_sz, q_len)
                    k_t = k_i[kc_start:kc_end].permute(1, 0, 2).unsqueeze(1).transpose(-2, -1).float()
                    v_t = v_i[kc_start:kc_end].permute(1, 0, 2).unsqueeze(1).float()

                    s = torch.matmul(q_seq, k_t)   # [kv, gqa, q_len, kc_len]
                    del k_t

                    # New token r may only see new tokens 0..r.
                    q_pos = torch.arange(q_len, device=dev).unsqueeze(1)
                    k_pos = torch.arange(kc_start, kc_end, device=dev).unsqueeze(0)
                    s.masked_fill_(k_pos > q_pos, float('-inf'))
                    del q_pos, k_pos

                    torch.amax(s, dim=-1, out=_m_blk)
                    torch.maximum(m, _m_blk, out=_m_new)
                    exp_s = s - _m_new.unsqueeze(-1)
                    del s
                    exp_s.exp_()
                    torch.exp(m - _m_new, out=_corr)
                    m.copy_(_m_new)
                    l.mul_(_corr).add_(exp_s.sum(dim=-1))
                    o.mul_(_corr.unsqueeze(-1)).add_(
                        torch.matmul(exp_s, v_t))
                    del exp_s, v_t

                # ---- Finalise ----
                # l > 0 for every row: each row sees at least its own token.
                o.div_(l.unsqueeze(-1))
                # [kv_heads, gqa, q_len, d] -> [q_len, num_q_heads, d]
                output[q_start:q_end] = (o.permute(2, 0, 1, 3)
                                         .reshape(q_len, num_q_heads, head_dim)
                                         .to(orig_dtype))
                del m, l, o, q_seq

            return output
        except Exception:
            # Keep the shapes next to the traceback: the server log is often
            # all there is after a crash on the card.
            print("[paged_attn ERROR] _forward_prefix_pytorch failed "
                  f"(query={tuple(query.shape)}, key_cache="
                  f"{tuple(key_cache.shape)}):", file=sys.stderr, flush=True)
            try:
                print(f"[paged_attn ERROR]   value_cache={tuple(value_cache.shape)} "
                      f"block_tables={tuple(block_tables.shape)} "
                      f"context_lens={context_lens.tolist()} "
                      f"query_start_loc={query_start_loc.tolist()}",
                      file=sys.stderr, flush=True)
            except Exception:
                pass
            traceback.print_exc()
            raise

    @staticmethod
    def swap_blocks(
        src_kv_cache: torch.Tensor,
        dst_kv_cache: torch.Tensor,
        src_to_dst: torch.Tensor,
    ) -> None:
        # Used for swapping blocks between GPU and CPU under preemption;
        # unchanged from upstream.
        src_key_cache = src_kv_cache[0]
        dst_key_cache = dst_kv_cache[0]
        ops.swap_blocks(src_key_cache, dst_key_cache, src_to_dst)

        src_value_cache = src_kv_cache[1]
        dst_value_cache = dst_kv_cache[1]
        ops.swap_blocks(src_value_cache, dst_value_cache, src_to_dst)

    @staticmethod
    def copy_blocks(
        kv_caches: List[torch.Tensor],
        src_to_dists: torch.Tensor,
    ) -> None:
        # Copy-on-write of shared prefix blocks (beam search, parallel
        # sampling); unchanged from upstream.
        key_caches = [kv_cache[0] for kv_cache in kv_caches]
        value_caches = [kv_cache[1] for kv_cache in kv_caches]
        ops.copy_blocks(key_caches, value_caches, src_to_dists)
