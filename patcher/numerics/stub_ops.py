"""Stand in for ``vllm._custom_ops`` as it behaves on the BI-V100, in PyTorch.

The vendor's ``paged_attn.py`` calls native kernels through
``from vllm import _custom_ops as ops``. ``StubOps`` implements the few it
uses with plain tensor code, so the vendor file and a patched copy can run
on a CPU and be compared:

- ``paged_attention_v1`` computes decode attention (one query token per
  sequence, any GQA ratio) into ``out``. It accepts the BI-V100's
  11-argument call and upstream's 19-argument one.
- ``paged_attention_v2`` raises ``NotImplementedError``, as the native op
  does on the card, unless the instance was made with
  ``v2_available=True``; then it runs a partitioned PyTorch version.
- ``reshape_and_cache``, ``swap_blocks`` and ``copy_blocks`` move data
  between paged caches.

Every call is counted in ``calls`` so that a test can tell which kernel a
code path took. Cache layouts are vLLM's: key cache ``[num_blocks,
kv_heads, head_dim // x, block_size, x]`` with ``x = 16 // element_size``,
value cache ``[num_blocks, kv_heads, head_dim, block_size]``.
"""

from __future__ import annotations

import collections
from typing import Any, Sequence

from .quiet_torch import torch

# Tokens per partition of the V2 kernel; upstream's _PARTITION_SIZE.
V2_PARTITION_SIZE = 512


class StubOps:
    """Provide the ``vllm._custom_ops`` functions that ``paged_attn.py`` calls.

    ``v2_available``: make ``paged_attention_v2`` work instead of raising.
    ``v1_max_seq_len``: make ``paged_attention_v1`` raise ``RuntimeError``
    when called with a ``max_seq_len`` above it, as the native V1 kernel
    fails past about 32K tokens (shared memory). ``None`` never fails.
    """

    def __init__(self, *, v2_available: bool = False, v1_max_seq_len: int | None = None) -> None:
        self.v2_available = v2_available
        self.v1_max_seq_len = v1_max_seq_len
        self.calls: collections.Counter[str] = collections.Counter()

    def reset(self) -> None:
        """Forget the call counts."""
        self.calls.clear()

    # -- decode -------------------------------------------------------

    def paged_attention_v1(
        self,
        out: torch.Tensor,
        query: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        num_kv_heads: int,
        scale: float,
        block_tables: torch.Tensor,
        seq_lens: torch.Tensor,
        block_size: int,
        max_seq_len: int,
        alibi_slopes: torch.Tensor | None,
        *rest: Any,
    ) -> None:
        """Write decode attention of each sequence's one query token into ``out``."""
        self.calls["paged_attention_v1"] += 1
        _check_decode_args(query, key_cache, value_cache, num_kv_heads, block_size,
                           alibi_slopes, rest)
        if self.v1_max_seq_len is not None and max_seq_len > self.v1_max_seq_len:
            raise RuntimeError(
                f"paged_attention_v1: max_seq_len={max_seq_len} exceeds the "
                f"kernel's shared memory (limit {self.v1_max_seq_len})")
        for i, seq_len in enumerate(_lengths(seq_lens)):
            if seq_len <= 0:
                out[i].zero_()
                continue
            keys, values = gather_tokens(key_cache, value_cache, block_tables[i], seq_len)
            scores = _scores(query[i], keys, scale)
            probs = torch.softmax(scores, dim=-1)
            out[i] = _weighted_values(probs, values).to(out.dtype)

    def paged_attention_v2(self, *args: Any, **kwargs: Any) -> None:
        """Raise ``NotImplementedError`` like the card, or run partitioned V2."""
        self.calls["paged_attention_v2"] += 1
        if not self.v2_available:
            raise NotImplementedError("paged_attention_v2 is not available on BI-V100")
        self._paged_attention_v2(*args, **kwargs)

    def _paged_attention_v2(
        self,
        out: torch.Tensor,
        exp_sums: torch.Tensor,
        max_logits: torch.Tensor,
        tmp_output: torch.Tensor,
        query: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        num_kv_heads: int,
        scale: float,
        block_tables: torch.Tensor,
        seq_lens: torch.Tensor,
        block_size: int,
        max_seq_len: int,
        alibi_slopes: torch.Tensor | None,
        *rest: Any,
    ) -> None:
        _check_decode_args(query, key_cache, value_cache, num_kv_heads, block_size,
                           alibi_slopes, rest)
        part = V2_PARTITION_SIZE
        for i, seq_len in enumerate(_lengths(seq_lens)):
            if seq_len <= 0:
                out[i].zero_()
                continue
            num_parts = -(-seq_len // part)
            if num_parts > tmp_output.shape[2]:
                raise ValueError(
                    f"paged_attention_v2: sequence {i} has {seq_len} tokens, "
                    f"{num_parts} partitions, but tmp_output holds {tmp_output.shape[2]}")
            keys, values = gather_tokens(key_cache, value_cache, block_tables[i], seq_len)
            scores = _scores(query[i], keys, scale)  # [heads, seq_len]
            for p in range(num_parts):
                chunk = scores[:, p * part:(p + 1) * part]
                peak = chunk.amax(dim=-1)
                weights = torch.exp(chunk - peak.unsqueeze(-1))
                total = weights.sum(dim=-1)
                max_logits[i, :, p] = peak
                exp_sums[i, :, p] = total
                partial = _weighted_values(weights, values[p * part:(p + 1) * part])
                tmp_output[i, :, p] = (partial / total.unsqueeze(-1)).to(tmp_output.dtype)
            # Reduce the partitions, rescaling each to the global max.
            peaks = max_logits[i, :, :num_parts]
            rescaled = exp_sums[i, :, :num_parts] * torch.exp(peaks - peaks.amax(dim=-1, keepdim=True))
            merged = (rescaled.unsqueeze(-1) * tmp_output[i, :, :num_parts].float()).sum(dim=1)
            out[i] = (merged / rescaled.sum(dim=-1, keepdim=True)).to(out.dtype)

    # -- cache management ---------------------------------------------

    def reshape_and_cache(
        self,
        key: torch.Tensor,
        value: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        slot_mapping: torch.Tensor,
        kv_cache_dtype: str = "auto",
        k_scale: float = 1.0,
        v_scale: float = 1.0,
    ) -> None:
        """Write token ``t``'s key and value to cache slot ``slot_mapping[t]``; skip slots < 0."""
        self.calls["reshape_and_cache"] += 1
        if kv_cache_dtype != "auto":
            raise NotImplementedError(f"stub reshape_and_cache: kv_cache_dtype={kv_cache_dtype!r}")
        slots = slot_mapping.flatten().long()
        keep = slots >= 0
        slots = slots[keep]
        block_size = value_cache.shape[3]
        blocks, offsets = slots // block_size, slots % block_size
        num_kv_heads, head_dim = value_cache.shape[1], value_cache.shape[2]
        x = key_cache.shape[4]
        # Advanced indices on dims 0 and 3 put the token axis first.
        key_cache[blocks, :, :, offsets, :] = (
            key[keep].reshape(-1, num_kv_heads, head_dim // x, x).to(key_cache.dtype))
        value_cache[blocks, :, :, offsets] = value[keep].to(value_cache.dtype)

    def swap_blocks(self, src: torch.Tensor, dst: torch.Tensor, block_mapping: torch.Tensor) -> None:
        """Copy block ``s`` of ``src`` to block ``d`` of ``dst`` for each row ``(s, d)``."""
        self.calls["swap_blocks"] += 1
        for s, d in _pairs(block_mapping):
            dst[d].copy_(src[s])

    def copy_blocks(
        self,
        key_caches: Sequence[torch.Tensor],
        value_caches: Sequence[torch.Tensor],
        block_mapping: torch.Tensor,
    ) -> None:
        """Copy block ``s`` to block ``d`` inside every cache, for each row ``(s, d)``."""
        self.calls["copy_blocks"] += 1
        pairs = _pairs(block_mapping)
        for cache in [*key_caches, *value_caches]:
            for s, d in pairs:
                cache[d].copy_(cache[s])


def gather_tokens(
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    block_table: torch.Tensor,
    num_tokens: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the first ``num_tokens`` keys and values of one sequence, ``[n, kv_heads, head_dim]``.

    Indexes slot by slot (token ``t`` lives at block ``table[t // bs]``,
    offset ``t % bs``) rather than by permuting whole blocks, so that it
    does not share a layout bug with the code under test.
    """
    block_size = value_cache.shape[3]
    num_kv_heads, head_dim = value_cache.shape[1], value_cache.shape[2]
    positions = torch.arange(num_tokens, device=key_cache.device)
    blocks = block_table.long()[positions // block_size]
    offsets = positions % block_size
    keys = key_cache[blocks, :, :, offsets, :].reshape(num_tokens, num_kv_heads, head_dim)
    values = value_cache[blocks, :, :, offsets]
    return keys, values


def _scores(query: torch.Tensor, keys: torch.Tensor, scale: float) -> torch.Tensor:
    """Return fp32 logits ``[num_q_heads, n]`` of one token's heads against ``keys``."""
    num_q_heads, head_dim = query.shape
    num_kv_heads = keys.shape[1]
    # Query heads grouped by the kv head they share ([kv, gqa, d]): no copy of the keys per head.
    grouped = query.float().reshape(num_kv_heads, num_q_heads // num_kv_heads, head_dim)
    return torch.einsum("kgd,nkd->kgn", grouped, keys.float()).reshape(num_q_heads, -1) * scale


def _weighted_values(weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Return ``[num_q_heads, d]``: ``weights [q_heads, n]`` applied to ``values``."""
    num_q_heads, n = weights.shape
    num_kv_heads = values.shape[1]
    grouped = weights.reshape(num_kv_heads, num_q_heads // num_kv_heads, n)
    return torch.einsum("kgn,nkd->kgd", grouped, values.float()).reshape(num_q_heads, -1)


def _check_decode_args(
    query: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    num_kv_heads: int,
    block_size: int,
    alibi_slopes: torch.Tensor | None,
    rest: tuple[Any, ...],
) -> None:
    if alibi_slopes is not None:
        raise NotImplementedError("stub paged attention: ALiBi is not implemented")
    if rest and rest[0] != "auto":
        raise NotImplementedError(f"stub paged attention: kv_cache_dtype={rest[0]!r}")
    if value_cache.shape[1] != num_kv_heads or key_cache.shape[1] != num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} but the key cache has {key_cache.shape[1]} kv heads "
                         f"and the value cache {value_cache.shape[1]}")
    if value_cache.shape[3] != block_size:
        raise ValueError(
            f"block_size={block_size} but the value cache has blocks of {value_cache.shape[3]}")
    if query.shape[1] % num_kv_heads:
        raise ValueError(f"{query.shape[1]} query heads do not divide into {num_kv_heads} kv heads")


def _lengths(seq_lens: torch.Tensor) -> list[int]:
    return [int(n) for n in seq_lens.tolist()]


def _pairs(block_mapping: torch.Tensor) -> list[tuple[int, int]]:
    return [(int(s), int(d)) for s, d in block_mapping.reshape(-1, 2).tolist()]


#: The instance the module-level names below are bound to, so that this
#: module itself can be put in ``sys.modules["vllm._custom_ops"]``.
default_ops = StubOps()

paged_attention_v1 = default_ops.paged_attention_v1
paged_attention_v2 = default_ops.paged_attention_v2
reshape_and_cache = default_ops.reshape_and_cache
swap_blocks = default_ops.swap_blocks
copy_blocks = default_ops.copy_blocks
calls = default_ops.calls
