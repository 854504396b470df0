"""Build seeded paged KV caches and call arguments for ``paged_attn.py``.

``make_prefix_case`` and ``make_decode_case`` return everything needed to
call ``PagedAttention.forward_prefix`` / ``forward_decode`` (and their
PyTorch fallbacks) on a batch of sequences, together with the keys and
values each sequence holds, so that ``reference()`` can compute the
expected attention without going through the paged layout at all.

Caches are laid out as vLLM lays them out (key ``[num_blocks, kv_heads,
head_dim // x, block_size, x]`` with ``x = 16 // element_size``, value
``[num_blocks, kv_heads, head_dim, block_size]``). Block tables are
shuffled, so a sequence's blocks are not contiguous, and every slot that
no sequence owns (spare blocks, the tail of a last block, block-table
padding) holds random garbage, so reading past a context shows up as a
wrong result rather than passing by luck. Everything is a function of the
arguments and ``seed``, and the values do not depend on ``dtype``: an fp16
case holds the fp32 case's values of the same seed, rounded.

``kwargs`` holds the pristine inputs. A copy under test may write into its
inputs (the vendor's prefill scales an fp32 ``query`` in place), so calls
take ``fresh_kwargs()`` / ``pytorch_kwargs()``, which clone every tensor,
and ``reference()`` always reads the pristine ones; it is computed once
per case, so a case run on several copies or stub ops pays for it once.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

from .quiet_torch import torch


@dataclass(frozen=True)
class PagedSequences:
    """A filled paged KV cache and the per-sequence tokens it holds."""

    key_cache: torch.Tensor = field(repr=False)
    value_cache: torch.Tensor = field(repr=False)
    block_tables: torch.Tensor = field(repr=False)
    #: Per sequence, all its tokens' keys / values, ``[n, kv_heads, head_dim]``.
    keys: tuple[torch.Tensor, ...] = field(repr=False)
    values: tuple[torch.Tensor, ...] = field(repr=False)


@dataclass(frozen=True)
class PrefixCase:
    """Arguments for ``forward_prefix``: new tokens after cached contexts."""

    context_lens: tuple[int, ...]
    query_lens: tuple[int, ...]
    num_kv_heads: int
    gqa_ratio: int
    head_dim: int
    block_size: int
    dtype: torch.dtype
    seed: int
    cache: PagedSequences = field(repr=False)
    #: Keyword arguments for ``PagedAttention.forward_prefix``.
    kwargs: dict[str, Any] = field(repr=False)

    def fresh_kwargs(self) -> dict[str, Any]:
        """Return fresh copies of the keyword arguments for ``PagedAttention.forward_prefix``."""
        return fresh_copies(self.kwargs)

    def pytorch_kwargs(self) -> dict[str, Any]:
        """Return fresh copies of the keyword arguments for ``PagedAttention._forward_prefix_pytorch``."""
        names = ("query", "key", "value", "key_cache", "value_cache", "block_tables",
                 "query_start_loc", "seq_lens_tensor", "context_lens")
        return fresh_copies({name: self.kwargs[name] for name in names})

    def reference(self) -> torch.Tensor:
        """Return the expected output in fp32, ``[num_tokens, num_q_heads, head_dim]`` (shared: do not modify it).

        Full softmax over context plus new tokens, causal among the new
        tokens, computed from the unpaged keys and values.
        """
        return self._reference

    @functools.cached_property
    def _reference(self) -> torch.Tensor:
        query = self.kwargs["query"]
        outputs = []
        start = 0
        for i, (ctx_len, q_len) in enumerate(zip(self.context_lens, self.query_lens)):
            q = query[start:start + q_len]
            start += q_len
            # New token r sits at position ctx_len + r and sees 0..ctx_len + r.
            rows = torch.arange(q_len).unsqueeze(1) + ctx_len
            cols = torch.arange(ctx_len + q_len).unsqueeze(0)
            outputs.append(_attend(q, self.cache.keys[i], self.cache.values[i],
                                   self.head_dim ** -0.5, mask=cols > rows))
        return torch.cat(outputs, dim=0) if outputs else torch.zeros(0, *query.shape[1:])


@dataclass(frozen=True)
class DecodeCase:
    """Arguments for ``forward_decode``: one new token per sequence, already cached."""

    seq_lens: tuple[int, ...]
    num_kv_heads: int
    gqa_ratio: int
    head_dim: int
    block_size: int
    dtype: torch.dtype
    seed: int
    cache: PagedSequences = field(repr=False)
    #: Keyword arguments for ``PagedAttention.forward_decode``.
    kwargs: dict[str, Any] = field(repr=False)

    def fresh_kwargs(self) -> dict[str, Any]:
        """Return fresh copies of the keyword arguments for ``PagedAttention.forward_decode``."""
        return fresh_copies(self.kwargs)

    def pytorch_kwargs(self) -> dict[str, Any]:
        """Return fresh copies of the keyword arguments for ``PagedAttention._forward_decode_pytorch``."""
        names = ("query", "key_cache", "value_cache", "block_tables", "seq_lens", "scale")
        return fresh_copies({name: self.kwargs[name] for name in names})

    def with_lengths(self, seq_lens: Sequence[int]) -> DecodeCase:
        """Return this case with sequence ``i`` holding only its first ``seq_lens[i]`` tokens.

        The cache is shared, not drawn again: one long case serves every
        length around a threshold. The slots past a shortened sequence's end
        keep its other tokens, which to it are garbage like unowned slots.
        ``max_seq_len`` becomes ``max(seq_lens)``.
        """
        if len(seq_lens) != len(self.seq_lens) or not all(0 <= n <= m for n, m in zip(seq_lens, self.seq_lens)):
            raise ValueError(f"lengths {list(seq_lens)} do not shorten {list(self.seq_lens)}")
        cache = dataclasses.replace(self.cache, keys=tuple(k[:n] for k, n in zip(self.cache.keys, seq_lens)),
                                    values=tuple(v[:n] for v, n in zip(self.cache.values, seq_lens)))
        lengths = self.kwargs["seq_lens"]
        kwargs = {**self.kwargs, "seq_lens": torch.tensor(list(seq_lens), dtype=lengths.dtype, device=lengths.device),
                  "max_seq_len": max(seq_lens, default=0)}
        return dataclasses.replace(self, seq_lens=tuple(seq_lens), cache=cache, kwargs=kwargs)

    def reference(self) -> torch.Tensor:
        """Return the expected output in fp32, ``[num_seqs, num_q_heads, head_dim]`` (shared: do not modify it)."""
        return self._reference

    @functools.cached_property
    def _reference(self) -> torch.Tensor:
        query = self.kwargs["query"]
        outputs = []
        for i, seq_len in enumerate(self.seq_lens):
            if seq_len == 0:
                outputs.append(torch.zeros(1, *query.shape[1:]))
                continue
            outputs.append(_attend(query[i:i + 1], self.cache.keys[i], self.cache.values[i],
                                   self.kwargs["scale"], mask=None))
        return torch.cat(outputs, dim=0) if outputs else torch.zeros(0, *query.shape[1:])


def fresh_copies(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Return ``kwargs`` with every tensor cloned (same values, dtype, device and strides)."""
    return {name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in kwargs.items()}


def make_prefix_case(
    context_lens: Sequence[int],
    query_lens: Sequence[int],
    *,
    num_kv_heads: int = 2,
    gqa_ratio: int = 2,
    head_dim: int = 64,
    block_size: int = 16,
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    spare_blocks: int = 3,
    pad_blocks: int = 1,
    device: str | torch.device = "cpu",
) -> PrefixCase:
    """Build a prefill batch: sequence ``i`` has ``context_lens[i]`` cached tokens and ``query_lens[i]`` new ones.

    As in vLLM, the new tokens' keys and values are both in ``key`` /
    ``value`` and already written to the cache.
    """
    if len(context_lens) != len(query_lens):
        raise ValueError(f"{len(context_lens)} context lengths but {len(query_lens)} query lengths")
    gen = torch.Generator().manual_seed(seed)
    num_q_heads = num_kv_heads * gqa_ratio
    totals = [c + q for c, q in zip(context_lens, query_lens)]
    cache = make_paged_sequences(totals, num_kv_heads=num_kv_heads, head_dim=head_dim,
                                 block_size=block_size, dtype=dtype, gen=gen,
                                 spare_blocks=spare_blocks, pad_blocks=pad_blocks)
    num_tokens = sum(query_lens)
    query = _randn(gen, (num_tokens, num_q_heads, head_dim), dtype)
    # The new tokens are the tail of each sequence.
    empty = torch.empty((0, num_kv_heads, head_dim), dtype=dtype)
    key = torch.cat([empty, *(k[c:] for k, c in zip(cache.keys, context_lens))])
    value = torch.cat([empty, *(v[c:] for v, c in zip(cache.values, context_lens))])
    starts = [0]
    for q_len in query_lens:
        starts.append(starts[-1] + q_len)

    def ints(values: Sequence[int]) -> torch.Tensor:
        return torch.tensor(list(values), dtype=torch.int32, device=device)

    kwargs: dict[str, Any] = {
        "query": query.to(device),
        "key": key.to(device),
        "value": value.to(device),
        "kv_cache_dtype": "auto",
        "key_cache": cache.key_cache.to(device),
        "value_cache": cache.value_cache.to(device),
        "block_tables": cache.block_tables.to(device),
        "query_start_loc": ints(starts),
        "seq_lens_tensor": ints(totals),
        "context_lens": ints(context_lens),
        "max_query_len": max(query_lens, default=0),
        "alibi_slopes": None,
        "sliding_window": None,
        "k_scale": 1.0,
        "v_scale": 1.0,
    }
    return PrefixCase(tuple(context_lens), tuple(query_lens), num_kv_heads, gqa_ratio,
                      head_dim, block_size, dtype, seed, cache, kwargs)


def make_decode_case(
    seq_lens: Sequence[int],
    *,
    num_kv_heads: int = 2,
    gqa_ratio: int = 2,
    head_dim: int = 64,
    block_size: int = 16,
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    spare_blocks: int = 3,
    pad_blocks: int = 1,
    max_seq_len: int | None = None,
    device: str | torch.device = "cpu",
) -> DecodeCase:
    """Build a decode batch: sequence ``i`` has ``seq_lens[i]`` cached tokens, the last one being queried.

    ``max_seq_len`` defaults to ``max(seq_lens)``; the scheduler may pass
    a larger, padded bound.
    """
    gen = torch.Generator().manual_seed(seed)
    cache = make_paged_sequences(seq_lens, num_kv_heads=num_kv_heads, head_dim=head_dim,
                                 block_size=block_size, dtype=dtype, gen=gen,
                                 spare_blocks=spare_blocks, pad_blocks=pad_blocks)
    query = _randn(gen, (len(seq_lens), num_kv_heads * gqa_ratio, head_dim), dtype)
    kwargs: dict[str, Any] = {
        "query": query.to(device),
        "key_cache": cache.key_cache.to(device),
        "value_cache": cache.value_cache.to(device),
        "block_tables": cache.block_tables.to(device),
        "seq_lens": torch.tensor(list(seq_lens), dtype=torch.int32, device=device),
        "max_seq_len": max(seq_lens, default=0) if max_seq_len is None else max_seq_len,
        "kv_cache_dtype": "auto",
        "num_kv_heads": num_kv_heads,
        "scale": head_dim ** -0.5,
        "alibi_slopes": None,
        "k_scale": 1.0,
        "v_scale": 1.0,
    }
    return DecodeCase(tuple(seq_lens), num_kv_heads, gqa_ratio, head_dim, block_size,
                      dtype, seed, cache, kwargs)


def make_paged_sequences(
    seq_lens: Sequence[int],
    *,
    num_kv_heads: int,
    head_dim: int,
    block_size: int,
    dtype: torch.dtype,
    gen: torch.Generator,
    spare_blocks: int = 3,
    pad_blocks: int = 1,
) -> PagedSequences:
    """Fill a paged cache with random values and hand ``seq_lens[i]`` of its slots to sequence ``i``.

    Blocks are handed out in a shuffled order; ``spare_blocks`` extra blocks
    stay unowned and each block-table row is padded with ``pad_blocks``
    (or more) ids of random blocks. A sequence's tokens are the values its
    slots hold, so everything it does not own is garbage it must not read.
    """
    x = 16 // torch.empty((), dtype=dtype).element_size()
    if head_dim % x:
        raise ValueError(f"head_dim={head_dim} is not a multiple of x={x} for {dtype}")
    blocks_per_seq = [-(-n // block_size) for n in seq_lens]
    num_blocks = sum(blocks_per_seq) + spare_blocks
    width = max(blocks_per_seq, default=0) + pad_blocks
    # Drawn slot-major, the same shape in every dtype, so that a seed gives the same values
    # whatever x is; every slot is drawn once (the tokens are read back, not drawn again).
    key_slots = _randn(gen, (num_blocks, block_size, num_kv_heads, head_dim), dtype)
    value_slots = _randn(gen, (num_blocks, block_size, num_kv_heads, head_dim), dtype)
    key_cache = (key_slots.view(num_blocks, block_size, num_kv_heads, head_dim // x, x)
                 .permute(0, 2, 3, 1, 4).contiguous())
    value_cache = value_slots.permute(0, 2, 3, 1).contiguous()
    block_tables = torch.randint(0, max(num_blocks, 1), (len(seq_lens), width),
                                 generator=gen, dtype=torch.int32)
    order = torch.randperm(num_blocks, generator=gen).to(torch.int32)

    keys, values = [], []
    next_block = 0
    for i, (n, used) in enumerate(zip(seq_lens, blocks_per_seq)):
        block_tables[i, :used] = order[next_block:next_block + used]
        next_block += used
        positions = torch.arange(n)
        blocks = block_tables[i].long()[positions // block_size]
        offsets = positions % block_size
        keys.append(key_slots[blocks, offsets])
        values.append(value_slots[blocks, offsets])
    return PagedSequences(key_cache, value_cache, block_tables, tuple(keys), tuple(values))


def _randn(gen: torch.Generator, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    # Draw in fp32 so that the same seed gives the same values in any dtype.
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)


def _attend(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    scale: float,
    mask: torch.Tensor | None,
) -> torch.Tensor:
    """Return naive fp32 attention ``[q, q_heads, d]``; ``mask[r, j]`` hides key ``j`` from row ``r``."""
    num_tokens, num_q_heads, head_dim = query.shape
    num_kv_heads = keys.shape[1]
    # Query heads grouped by the kv head they share ([q, kv, gqa, d]): no copy of the keys per head.
    grouped = query.float().reshape(num_tokens, num_kv_heads, num_q_heads // num_kv_heads, head_dim)
    scores = torch.einsum("qkgd,nkd->kgqn", grouped, keys.float()) * scale
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    out = torch.einsum("kgqn,nkd->qkgd", torch.softmax(scores, dim=-1), values.float())
    return out.reshape(num_tokens, num_q_heads, head_dim)
