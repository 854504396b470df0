"""Run the vendor's and the patched ``paged_attn.py`` side by side on the CPU and compare them.

Both copies are loaded with their own stub ``vllm._custom_ops`` (V1 in
plain PyTorch; V2 raising ``NotImplementedError`` as on the BI-V100, or
working, in a second pass) and called on the same seeded paged KV caches
over a grid of shapes. Prefill must be bitwise equal: the patches only move
where the same kernels read their inputs. Decode may take another kernel in
the patched copy (V2, or PyTorch past a different threshold), so it must
agree within fp32 round-off, and the report says which tier each side ran.

Every call gets fresh copies of all its inputs, so neither copy sees what
the other wrote: the vendor's prefill scales an fp32 ``query`` in place
(``.float()`` of an fp32 tensor is the tensor itself, then ``.mul_``).
Such a write is a finding of its own (``InPlaceWrite``), not a numerical
difference, as long as both copies write the same bits; a write only one
copy makes, or different bits written, is a difference. Each output is also
measured against the case's independent reference (naive attention over the
unpaged keys and values), so the report shows both copies are right, not
only equal.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import libcst as cst
import torch

from ..depth import require_parseable
from .cases import DecodeCase, PrefixCase, make_decode_case, make_prefix_case
from .loader import load_paged_attn
from .stub_ops import StubOps

CLASS = "PagedAttention"
THRESHOLD = "_PYTORCH_DECODE_THRESHOLD"
V1_LIMIT = 32768  # tokens; the BI-V100 V1 kernel fails past this (shared memory)
# Decode past fp32 round-off: relative to the output's magnitude, for outputs in fp32.
FP32_TOLERANCE = 64 * torch.finfo(torch.float32).eps
# Lowered thresholds sit this far above the highest one that cannot be lowered.
THRESHOLD_GAP = 1024

BI_V100 = "BI-V100 ops (V2 raises NotImplementedError)"
V2_WORKS = "ops with a working V2 (as on upstream GPUs)"


@dataclass(frozen=True)
class Shape:
    """The model dimensions of one case."""

    head_dim: int
    block_size: int
    num_kv_heads: int
    gqa_ratio: int
    dtype: torch.dtype = torch.float32

    def __str__(self) -> str:
        dtype = str(self.dtype).replace("torch.", "")
        return (f"head_dim={self.head_dim} block={self.block_size} kv_heads={self.num_kv_heads} "
                f"gqa={self.gqa_ratio} {dtype}")


@dataclass(frozen=True)
class Comparison:
    """One call of one function on both copies."""

    function: str  # forward_prefix / forward_decode
    ops: str  # BI_V100 or V2_WORKS
    case: str
    vendor_tier: str
    patched_tier: str
    equal: bool  # bitwise
    max_abs_diff: float
    tolerance: float  # 0 for prefill: only bitwise equality passes
    error: str | None = None  # an exception on either side, or inputs written differently
    dtype: str = "float32"  # of the inputs
    #: Each copy's max abs error against the case's reference (nan when it raised).
    vendor_ref_error: float = math.nan
    patched_ref_error: float = math.nan
    #: The arguments each copy wrote into (both wrote the same bits when ``error`` is None).
    vendor_writes: tuple[str, ...] = ()
    patched_writes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Bitwise equal, or (decode) within fp32 round-off, with no exception."""
        return self.error is None and (self.equal or self.max_abs_diff <= self.tolerance)


@dataclass(frozen=True)
class InPlaceWrite:
    """A function that writes into one of its inputs, aggregated over every case."""

    function: str
    argument: str
    sides: tuple[str, ...]  # "vendor", "patched"
    dtypes: tuple[str, ...]  # input dtypes for which it wrote
    untouched: tuple[str, ...]  # input dtypes tried for which it did not

    @property
    def message(self) -> str:
        """Say it in one sentence, for the report."""
        who = " and ".join(self.sides)
        verb = "write" if len(self.sides) > 1 else "writes"
        text = f"{who} {self.function} {verb} into `{self.argument}` in place for {', '.join(self.dtypes)} inputs"
        if self.untouched:
            text += f" ({', '.join(self.untouched)} inputs are left alone)"
        return text


@dataclass(frozen=True)
class NumericsResult:
    """Every comparison, the thresholds exercised, and what was changed to keep it fast."""

    comparisons: tuple[Comparison, ...]
    thresholds: tuple[tuple[int, str], ...]  # (tokens, where it comes from)
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[Comparison, ...]:
        """The comparisons that are not OK."""
        return tuple(c for c in self.comparisons if not c.ok)

    @property
    def in_place_writes(self) -> tuple[InPlaceWrite, ...]:
        """Return every (function, argument) some copy wrote into, once, with the sides and dtypes concerned."""
        tried: dict[str, list[str]] = {}
        wrote: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for c in self.comparisons:
            tried.setdefault(c.function, [])
            if c.dtype not in tried[c.function]:
                tried[c.function].append(c.dtype)
            for side, names in (("vendor", c.vendor_writes), ("patched", c.patched_writes)):
                for name in names:
                    sides, dtypes = wrote.setdefault((c.function, name), ([], []))
                    if side not in sides:
                        sides.append(side)
                    if c.dtype not in dtypes:
                        dtypes.append(c.dtype)
        return tuple(
            InPlaceWrite(function, name, tuple(s for s in ("vendor", "patched") if s in sides), tuple(dtypes),
                         tuple(d for d in tried[function] if d not in dtypes))
            for (function, name), (sides, dtypes) in wrote.items()
        )


def compare_sources(vendor: bytes, patched: bytes, *, v1_limit: int = V1_LIMIT,
                    full_thresholds: bool = False) -> NumericsResult:
    """Compare ``forward_prefix`` and ``forward_decode`` of two ``paged_attn.py`` sources.

    ``full_thresholds`` keeps the class decode thresholds at their values;
    otherwise, when both copies share one, it is lowered on both to just
    above the highest threshold that is a literal in the code, so that long
    contexts stay cheap on a CPU while every tier boundary is still crossed.
    """
    literals = sorted(set(_literal_thresholds(vendor)) | set(_literal_thresholds(patched)))
    notes: list[str] = []
    comparisons: list[Comparison] = []
    lowered: int | None = None
    for ops_mode in (BI_V100, V2_WORKS):
        pair = _Pair(vendor, patched, ops_mode, v1_limit)
        if ops_mode == BI_V100:
            lowered = _lower_thresholds(pair, literals, full_thresholds, notes)
        elif lowered is not None:
            pair.set_threshold(lowered)
        thresholds = _thresholds(pair, literals)
        if ops_mode == BI_V100:
            comparisons.extend(pair.prefix(case, label) for case, label in _prefix_grid())
        for case, label in _decode_grid(thresholds, full=ops_mode == BI_V100):
            comparisons.append(pair.decode(case, label))
    return NumericsResult(tuple(comparisons), tuple(thresholds), tuple(notes))


# -- the two copies -----------------------------------------------------


class _Pair:
    """The vendor and patched modules, each with its own stub ops and tier counters."""

    def __init__(self, vendor: bytes, patched: bytes, ops_mode: str, v1_limit: int):
        self.ops_mode = ops_mode
        works = ops_mode == V2_WORKS
        self.sides = []
        for name, source in (("vendor", vendor), ("patched", patched)):
            ops = StubOps(v2_available=works, v1_max_seq_len=v1_limit)
            module = load_paged_attn(source, ops, f"paged_attn_{name}", filename=f"<{name} paged_attn.py>")
            self.sides.append(_Side(name, module, ops))

    def threshold(self, side: int) -> int | None:
        value = getattr(self.sides[side].cls, THRESHOLD, None)
        return value if isinstance(value, int) else None

    def set_threshold(self, value: int) -> None:
        for side in self.sides:
            setattr(side.cls, THRESHOLD, value)

    def prefix(self, case: PrefixCase, label: str) -> Comparison:
        return self._call("forward_prefix", case, label, tolerance=0.0)

    def decode(self, case: DecodeCase, label: str) -> Comparison:
        return self._call("forward_decode", case, label, tolerance=FP32_TOLERANCE)

    def _call(self, function: str, case: PrefixCase | DecodeCase, label: str, tolerance: float) -> Comparison:
        # Fresh copies for each side, so neither sees what the other wrote; after the call they hold what it did.
        written = [case.fresh_kwargs() for _ in self.sides]
        outs = [side.run(function, kwargs) for side, kwargs in zip(self.sides, written)]
        comparison = _compare(function, self.ops_mode, label, outs, tolerance)
        writes = [tuple(name for name, value in after.items() if not _same_bits(value, case.kwargs[name]))
                  for after in written]
        error = comparison.error
        if error is None and (writes[0] != writes[1]
                              or not all(_same_bits(written[0][n], written[1][n]) for n in writes[0])):
            error = (f"the copies write into their inputs differently: vendor into {_names(writes[0])}, "
                     f"patched into {_names(writes[1])}" if writes[0] != writes[1] else
                     f"both copies write into {_names(writes[0])}, but not the same values")
        reference = case.reference()
        return dataclasses.replace(
            comparison, error=error, dtype=str(case.dtype).replace("torch.", ""),
            vendor_ref_error=_ref_error(outs[0][0], reference), patched_ref_error=_ref_error(outs[1][0], reference),
            vendor_writes=writes[0], patched_writes=writes[1])


@dataclass
class _Side:
    name: str
    module: types.ModuleType
    ops: StubOps
    pytorch_calls: int = 0

    def __post_init__(self) -> None:
        # Count the PyTorch fallbacks: forward_* call them through the class attribute.
        for fallback in ("_forward_decode_pytorch", "_forward_prefix_pytorch"):
            original = getattr(self.cls, fallback, None)
            if original is not None:
                setattr(self.cls, fallback, staticmethod(self._counted(original)))

    @property
    def cls(self) -> Any:
        return getattr(self.module, CLASS)

    def _counted(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.pytorch_calls += 1
            return function(*args, **kwargs)
        return counted

    def run(self, function: str, kwargs: dict[str, Any]) -> tuple[torch.Tensor | None, str, str | None]:
        """Return the output, the tier that produced it, and the exception if any."""
        self.ops.reset()
        self.pytorch_calls = 0
        unavailable_before = bool(getattr(self.cls, "_v2_unavailable", False))
        try:
            output, error = getattr(self.cls, function)(**kwargs), None
        except Exception as exc:  # a failing copy is a finding, not a crash
            output, error = None, f"{self.name}: {type(exc).__name__}: {exc}"
        return output, self._tier(function, unavailable_before), error

    def _tier(self, function: str, unavailable_before: bool) -> str:
        v1, v2 = self.ops.calls["paged_attention_v1"], self.ops.calls["paged_attention_v2"]
        if function == "forward_prefix":
            return "PyTorch" if self.pytorch_calls else "other"
        if self.pytorch_calls:
            return "PyTorch"
        if v2 and v1:
            return "V2 failed, V1"
        if v2:
            return "V2"
        if v1:
            return "V1 (V2 marked unavailable)" if unavailable_before else "V1"
        return "none"


def _compare(function: str, ops_mode: str, label: str,
             outs: Sequence[tuple[torch.Tensor | None, str, str | None]], tolerance: float) -> Comparison:
    (vendor, vendor_tier, vendor_error), (patched, patched_tier, patched_error) = outs
    error = vendor_error or patched_error
    if error is not None or vendor is None or patched is None:
        return Comparison(function, ops_mode, label, vendor_tier, patched_tier, False, math.inf, tolerance,
                          error or "no output")
    if vendor.shape != patched.shape or vendor.dtype != patched.dtype:
        return Comparison(function, ops_mode, label, vendor_tier, patched_tier, False, math.inf, tolerance,
                          f"vendor gives {tuple(vendor.shape)} {vendor.dtype}, patched {tuple(patched.shape)} "
                          f"{patched.dtype}")
    equal = torch.equal(vendor, patched)
    diff = 0.0 if equal else float((vendor.float() - patched.float()).abs().max())
    scale = max(1.0, float(vendor.float().abs().max())) if vendor.numel() else 1.0
    if tolerance and vendor.dtype != torch.float32:
        # The round-off of fp32 work can flip the last bit of a half-precision output.
        tolerance = float(torch.finfo(vendor.dtype).eps)
    return Comparison(function, ops_mode, label, vendor_tier, patched_tier, equal, diff, tolerance * scale)


def _same_bits(after: Any, before: Any) -> bool:
    """Tell whether an argument still holds what it held (tensors: same shape, dtype and values, NaN included)."""
    if not isinstance(after, torch.Tensor) or not isinstance(before, torch.Tensor):
        return type(after) is type(before) and bool(after is before or after == before)
    if after.shape != before.shape or after.dtype != before.dtype:
        return False
    if after.is_floating_point():
        return bool(((after == before) | (after.isnan() & before.isnan())).all())
    return torch.equal(after, before)


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "none"


def _ref_error(output: torch.Tensor | None, reference: torch.Tensor) -> float:
    if output is None or output.shape != reference.shape:
        return math.nan
    return float((output.float() - reference).abs().max()) if output.numel() else 0.0


# -- thresholds ---------------------------------------------------------


def _literal_thresholds(source: bytes) -> list[int]:
    """Integer literals ``forward_decode`` compares lengths with (e.g. ``actual_max > 8192``)."""
    require_parseable(source, "the shipped paged_attn.py")
    module = cst.parse_module(source)
    found: list[int] = []

    class _Decode(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            if node.name.value == "forward_decode":
                node.visit(_Literals())
                return False
            return True

    class _Literals(cst.CSTVisitor):
        def visit_Comparison(self, node: cst.Comparison) -> None:
            operands = (node.left, *(c.comparator for c in node.comparisons))
            # Only comparisons of a length (actual_max, max_seq_len, seq_lens.max()), not of
            # strides or head counts.
            if not any(_is_length(operand) for operand in operands):
                return
            ordering = all(isinstance(c.operator, _ORDERING) for c in node.comparisons)
            for operand in operands:
                # A length threshold is at least a block of tokens; 0 and 1 test for emptiness.
                if ordering and isinstance(operand, cst.Integer) and int(operand.evaluated_value) >= 16:
                    found.append(int(operand.evaluated_value))

    module.visit(_Decode())
    return found


_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def _is_length(node: cst.BaseExpression) -> bool:
    text = cst.Module(body=[]).code_for_node(node)
    return not isinstance(node, cst.Integer) and ("max" in text or "len" in text)


def _lower_thresholds(pair: _Pair, literals: Sequence[int], full: bool, notes: list[str]) -> int | None:
    vendor, patched = pair.threshold(0), pair.threshold(1)
    if full or vendor is None or vendor != patched:
        if vendor != patched:
            notes.append(f"{CLASS}.{THRESHOLD} differs (vendor {vendor}, patched {patched}): "
                         f"both kept, so the lengths between them compare two tiers")
        return None
    lowered = max(literals, default=0) + THRESHOLD_GAP
    if lowered >= vendor:
        return None
    pair.set_threshold(lowered)
    notes.append(f"{CLASS}.{THRESHOLD} lowered from {vendor} to {lowered} on both copies to keep CPU time low "
                 f"(--full-thresholds keeps it); every tier boundary is still crossed")
    return lowered


def _thresholds(pair: _Pair, literals: Sequence[int]) -> list[tuple[int, str]]:
    found = {value: "a literal in forward_decode" for value in literals}
    for side in (0, 1):
        value = pair.threshold(side)
        if value is not None:
            found[value] = f"{CLASS}.{THRESHOLD}"
    return sorted(found.items())


# -- the grid -----------------------------------------------------------

SHAPES = tuple(
    Shape(head_dim, block_size, kv, gqa)
    for head_dim, block_size, (kv, gqa) in itertools.product((128, 256), (16, 32), ((2, 1), (2, 2), (1, 6)))
)
HALF_SHAPES = (Shape(128, 16, 2, 2, torch.float16), Shape(256, 16, 1, 6, torch.bfloat16))
# One sequence's context per label: none, one full block, a ragged last block.
TILE_BLOCKS = 32  # _BLOCKS_PER_TILE in the vendor's _forward_prefix_pytorch
# Two groups of 8192 tokens (prefix-pregather's default max_gather_tokens), then 3 tiles and a
# ragged one of 5 blocks, whose last block holds 7 tokens.
LONG_CONTEXT = 2 * 8192 + 3 * TILE_BLOCKS * 16 + 4 * 16 + 7


def _prefix_grid() -> Iterator[tuple[PrefixCase, str]]:
    seed = itertools.count()
    for shape in (*SHAPES, *HALF_SHAPES):
        bs = shape.block_size
        batches = [
            ("no context", [0], [7]),
            ("one block", [bs], [5]),
            ("ragged last block", [3 * bs + 5], [9]),
            ("several sequences", [0, bs, 2 * bs + 3, (TILE_BLOCKS + 1) * bs + 1], [3, 1, 17, 11]),
        ]
        if bs == 16 and shape.dtype == torch.float32 and shape.head_dim == 128:
            # Past one tile of context and of new tokens: both phases loop.
            batches.append(("two tiles each phase", [(TILE_BLOCKS + 1) * bs + 1], [TILE_BLOCKS * bs + 7]))
        if bs == 16 and shape.head_dim == 256 and shape.num_kv_heads == 1:
            # Past two gather groups of prefix-pregather's default 8192 tokens, with a ragged
            # last group and tile; and a context of exactly one group beside it.
            batches.append(("long contexts", [LONG_CONTEXT, 8192], [5, 3]))
        for label, contexts, queries in batches:
            case = make_prefix_case(contexts, queries, num_kv_heads=shape.num_kv_heads, gqa_ratio=shape.gqa_ratio,
                                    head_dim=shape.head_dim, block_size=bs, dtype=shape.dtype, seed=next(seed))
            yield case, f"{shape} {label}: contexts {contexts}, new tokens {queries}"


def _decode_grid(thresholds: Sequence[tuple[int, str]], *, full: bool) -> Iterator[tuple[DecodeCase, str]]:
    seed = itertools.count(1000)
    shapes = (*SHAPES, *HALF_SHAPES) if full else SHAPES[:3]
    for shape in shapes:
        bs = shape.block_size
        batches: list[tuple[str, list[int], int | None]] = [
            ("one token", [1], None),
            ("one block", [bs], None),
            ("ragged last block", [3 * bs + 5], None),
            ("several sequences", [1, bs, 3 * bs + 5, 100], None),
            ("padded max_seq_len", [37, 100], 4096),
        ]
        for label, lengths, max_seq_len in batches:
            case = make_decode_case(lengths, num_kv_heads=shape.num_kv_heads, gqa_ratio=shape.gqa_ratio,
                                    head_dim=shape.head_dim, block_size=bs, dtype=shape.dtype, seed=next(seed),
                                    max_seq_len=max_seq_len)
            yield case, f"{shape} {label}: lengths {lengths}" + (f", max_seq_len {max_seq_len}" if max_seq_len else "")
    # Both sides of each threshold: T tokens stay in the lower tier, T + 1 go up.
    for head_dim in (128, 256) if full else (128,):
        shape = Shape(head_dim, 16, 1, 2)
        for value, where in thresholds:
            for length in (value, value + 1):
                case = make_decode_case([5, length], num_kv_heads=1, gqa_ratio=2, head_dim=head_dim,
                                        block_size=16, seed=next(seed))
                yield case, f"{shape} threshold {value} ({where}): lengths [5, {length}]"
