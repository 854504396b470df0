"""Run the vendor's and the patched ``paged_attn.py`` side by side on the CPU and compare them.

Both copies are loaded with their own stub ``vllm._custom_ops`` (V1 in
plain PyTorch; V2 raising ``NotImplementedError`` as on the BI-V100, or
working, in a second set of calls) and called on the same seeded paged KV
caches over a grid of shapes. Prefill must be bitwise equal: the patches
only move where the same kernels read their inputs. Decode may take another
kernel in the patched copy (V2, or PyTorch past a different threshold), so
it must agree within fp32 round-off, and the report says which tier each
side ran.

What a caller sees after a call is the output and every tensor it passed
in, so both are compared. Every call gets fresh copies of all its inputs,
so neither copy sees what the other wrote: the vendor's prefill scales an
fp32 ``query`` in place (``.float()`` of an fp32 tensor is the tensor
itself, then ``.mul_``). After the call, each tensor argument of each copy
is compared bit for bit with what it held and with what the other copy left
there (``ArgumentWrite``): both copies writing the same bits is a finding,
not a difference; a write only one copy makes, or different values written,
leaves the caller with different contents, and is a difference. Each output
is also measured against the case's independent reference (naive attention
over the unpaged keys and values), so the report shows both copies are
right, not only equal.

The grid is built once: a decode case that both kinds of stub ops run is
generated, and its reference computed, once. PyTorch runs on one thread
(see ``_threads``).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import itertools
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from ..depth import require_parseable
from .cases import DecodeCase, PrefixCase, make_decode_case, make_prefix_case
from .loader import load_paged_attn
from .quiet_torch import torch
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
SIDES = ("vendor", "patched")

#: Called after each comparison with (done, total).
Progress = Callable[[int, int], None]


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
class ArgumentWrite:
    """A tensor argument that at least one copy wrote into during one call, and what each left in it."""

    argument: str
    vendor_wrote: bool
    patched_wrote: bool
    equal: bool  # both copies left the same bits in it
    max_abs_diff: float = 0.0  # between what the two copies left; 0.0 when equal

    @property
    def sides(self) -> tuple[str, ...]:
        """The copies that wrote into it."""
        return tuple(side for side, wrote in zip(SIDES, (self.vendor_wrote, self.patched_wrote)) if wrote)

    @property
    def message(self) -> str:
        """Say what the caller sees afterwards, for one call."""
        name = f"`{self.argument}`"
        if self.equal:
            return f"vendor and patched write the same values into {name}"
        if len(self.sides) == 2:
            return f"vendor and patched write different values into {name}, max abs diff {self.max_abs_diff:.3g}"
        writer = self.sides[0]
        other = SIDES[1 - SIDES.index(writer)]
        return (f"only {writer} writes into {name} ({other} leaves it as it was), so the caller sees different "
                f"{name} contents afterwards, max abs diff {self.max_abs_diff:.3g}")


@dataclass(frozen=True)
class Comparison:
    """One call of one function on both copies."""

    function: str  # forward_prefix / forward_decode
    ops: str  # BI_V100 or V2_WORKS
    case: str
    vendor_tier: str
    patched_tier: str
    equal: bool  # the outputs, bitwise
    max_abs_diff: float
    tolerance: float  # 0 for prefill: only bitwise equality passes
    error: str | None = None  # an exception on either side, or outputs of another shape or dtype
    dtype: str = "float32"  # of the inputs
    #: Each copy's max abs error against the case's reference (nan when it raised).
    vendor_ref_error: float = math.nan
    patched_ref_error: float = math.nan
    #: Every tensor argument either copy wrote into, with what each left there.
    writes: tuple[ArgumentWrite, ...] = ()

    @property
    def outputs_ok(self) -> bool:
        """No exception, and the outputs bitwise equal or (decode) within fp32 round-off."""
        return self.error is None and (self.equal or 0 < self.tolerance and self.max_abs_diff <= self.tolerance)

    @property
    def written_differently(self) -> tuple[ArgumentWrite, ...]:
        """The arguments the two copies leave different contents in."""
        return tuple(w for w in self.writes if not w.equal)

    @property
    def ok(self) -> bool:
        """The outputs agree and every argument holds the same bits after either copy."""
        return self.outputs_ok and not self.written_differently

    @property
    def vendor_writes(self) -> tuple[str, ...]:
        """The arguments the vendor's copy wrote into."""
        return tuple(w.argument for w in self.writes if w.vendor_wrote)

    @property
    def patched_writes(self) -> tuple[str, ...]:
        """The arguments the patched copy wrote into."""
        return tuple(w.argument for w in self.writes if w.patched_wrote)


@dataclass(frozen=True)
class InPlaceWrite:
    """One function writing into one of its arguments, the same way in every case listed, aggregated.

    ``equal``: both copies write, and leave the same bits (a finding, not a
    difference). Otherwise the caller sees different contents afterwards:
    one copy writes and the other does not, or both write different values.
    """

    function: str
    argument: str
    sides: tuple[str, ...]  # "vendor", "patched": the copies that write
    dtypes: tuple[str, ...]  # input dtypes for which it happened
    untouched: tuple[str, ...]  # input dtypes tried for which neither copy wrote into it
    equal: bool = True
    cases: int = 0
    max_abs_diff: float = 0.0  # between what the two copies left, over those cases

    @property
    def message(self) -> str:
        """Say it in one sentence, for the report."""
        who = " and ".join(self.sides)
        name = f"`{self.argument}`"
        dtypes = f"for {', '.join(self.dtypes)} inputs"
        alone = f" ({', '.join(self.untouched)} inputs are left alone)" if self.untouched else ""
        if self.equal:
            verb = "write" if len(self.sides) > 1 else "writes"
            return f"{who} {self.function} {verb} into {name} in place {dtypes}{alone}"
        measured = f"{self.cases} case(s), max abs diff {self.max_abs_diff:.3g}"
        if len(self.sides) > 1:
            return f"vendor and patched {self.function} write different values into {name} {dtypes}{alone} ({measured})"
        other = SIDES[1 - SIDES.index(self.sides[0])]
        return (f"only {who} {self.function} writes into {name} in place, {dtypes}{alone}; {other} leaves it as it "
                f"was, so the caller sees different {name} contents afterwards ({measured})")


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
        """Return each way a function writes into an argument, once, with the dtypes and cases concerned.

        A way is who writes (vendor, patched or both) and whether both copies
        leave the same bits; the same argument can show up once per way.
        """
        tried: dict[str, list[str]] = {}
        touched: dict[tuple[str, str], set[str]] = {}
        found: dict[tuple[str, str, tuple[str, ...], bool], tuple[list[str], list[float]]] = {}
        for c in self.comparisons:
            dtypes = tried.setdefault(c.function, [])
            if c.dtype not in dtypes:
                dtypes.append(c.dtype)
            for w in c.writes:
                touched.setdefault((c.function, w.argument), set()).add(c.dtype)
                written, diffs = found.setdefault((c.function, w.argument, w.sides, w.equal), ([], []))
                if c.dtype not in written:
                    written.append(c.dtype)
                diffs.append(w.max_abs_diff)
        return tuple(
            InPlaceWrite(function, name, sides, tuple(written),
                         tuple(d for d in tried[function] if d not in touched[function, name]),
                         equal, len(diffs), max(diffs, key=lambda d: (d != d, d)))  # NaN first
            for (function, name, sides, equal), (written, diffs) in found.items()
        )


def compare_sources(vendor: bytes, patched: bytes, *, v1_limit: int = V1_LIMIT, full_thresholds: bool = False,
                    progress: Progress | None = None, threads: int = 1) -> NumericsResult:
    """Compare ``forward_prefix`` and ``forward_decode`` of two ``paged_attn.py`` sources.

    ``full_thresholds`` keeps the class decode thresholds at their values;
    otherwise, when both copies share one, it is lowered on both to just
    above the highest threshold that is a literal in the code, so that long
    contexts stay cheap on a CPU while every tier boundary is still crossed.
    ``progress`` is called after each comparison with (done, total).
    ``threads``: PyTorch's intra-op threads while it runs (restored after).
    """
    literals = sorted(set(_literal_thresholds(vendor)) | set(_literal_thresholds(patched)))
    notes: list[str] = []
    pairs = {mode: _Pair(vendor, patched, mode, v1_limit) for mode in (BI_V100, V2_WORKS)}
    lowered = _lower_thresholds(pairs[BI_V100], literals, full_thresholds, notes)
    if lowered is not None:
        pairs[V2_WORKS].set_threshold(lowered)
    thresholds = _thresholds(pairs[BI_V100], literals)
    plan = [*_prefix_grid(), *_decode_grid(thresholds)]
    total = sum(len(planned.modes) for planned in plan)
    comparisons: list[Comparison] = []
    with _threads(threads):
        for planned in plan:
            case = planned.build()
            for mode in planned.modes:
                comparisons.append(pairs[mode].call(planned.function, case, planned.label))
                if progress is not None:
                    progress(len(comparisons), total)
    # In the report's order: prefill, then decode on each kind of ops (each pair's own calls keep their order).
    order = {(function, mode): i for i, (function, mode) in
             enumerate(itertools.product(("forward_prefix", "forward_decode"), (BI_V100, V2_WORKS)))}
    comparisons.sort(key=lambda c: order[c.function, c.ops])
    return NumericsResult(tuple(comparisons), tuple(thresholds), tuple(notes))


@contextlib.contextmanager
def _threads(count: int) -> Iterator[None]:
    """Run PyTorch on ``count`` intra-op threads, then give the caller back its setting."""
    # The kernels here are small (a few thousand tokens at most); splitting each over threads
    # costs more in wake-ups and spinning than it saves, and several times the CPU on a loaded
    # machine (benchmarks/verify_numerics.py --threads 2 shows it).
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# -- the two copies -----------------------------------------------------


class _Pair:
    """The vendor and patched modules, each with its own stub ops and tier counters."""

    def __init__(self, vendor: bytes, patched: bytes, ops_mode: str, v1_limit: int):
        self.ops_mode = ops_mode
        works = ops_mode == V2_WORKS
        self.sides = []
        for name, source in zip(SIDES, (vendor, patched)):
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
        return self.call("forward_prefix", case, label)

    def decode(self, case: DecodeCase, label: str) -> Comparison:
        return self.call("forward_decode", case, label)

    def call(self, function: str, case: PrefixCase | DecodeCase, label: str) -> Comparison:
        """Call ``function`` on both copies with fresh copies of the case's inputs; compare what each leaves."""
        tolerance = 0.0 if function == "forward_prefix" else FP32_TOLERANCE
        # Fresh copies for each side, so neither sees what the other wrote; after the call they hold what it left.
        inputs = [case.fresh_kwargs() for _ in self.sides]
        outs = [side.run(function, kwargs) for side, kwargs in zip(self.sides, inputs)]
        comparison = _compare(function, self.ops_mode, label, outs, tolerance)
        reference = case.reference()
        return dataclasses.replace(
            comparison, dtype=str(case.dtype).replace("torch.", ""),
            vendor_ref_error=_ref_error(outs[0][0], reference), patched_ref_error=_ref_error(outs[1][0], reference),
            writes=_writes(case.kwargs, inputs[0], inputs[1]))


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
    equal = _same_bits(vendor, patched)
    diff = 0.0 if equal else _max_abs_diff(vendor, patched)
    scale = max(1.0, float(vendor.float().abs().max())) if vendor.numel() else 1.0
    if tolerance and vendor.dtype != torch.float32:
        # The round-off of fp32 work can flip the last bit of a half-precision output.
        tolerance = float(torch.finfo(vendor.dtype).eps)
    return Comparison(function, ops_mode, label, vendor_tier, patched_tier, equal, diff, tolerance * scale)


def _writes(before: dict[str, Any], vendor: dict[str, Any], patched: dict[str, Any]) -> tuple[ArgumentWrite, ...]:
    """Compare what each copy left in every tensor argument with what it held, and with the other copy."""
    found = []
    for name, pristine in before.items():
        if not isinstance(pristine, torch.Tensor):
            continue  # ints, floats, strings and None cannot be written into
        vendor_wrote = not _same_bits(vendor[name], pristine)
        patched_wrote = not _same_bits(patched[name], pristine)
        if vendor_wrote or patched_wrote:
            equal = vendor_wrote and patched_wrote and _same_bits(vendor[name], patched[name])
            found.append(ArgumentWrite(name, vendor_wrote, patched_wrote, equal,
                                       0.0 if equal else _max_abs_diff(vendor[name], patched[name])))
    return tuple(found)


# Integer dtypes of each width, to compare floating-point tensors bit for bit (NaN, -0.0 and all).
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Tell whether two tensors have the same shape, dtype and bits."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_complex():
        # Its two floats, each compared by its bits (complex128 has no 16-byte integer to view as).
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        bits = _BITS[a.element_size()]
        return torch.equal(a.view(bits), b.view(bits))
    return torch.equal(a, b)


def _max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Return the largest absolute difference of two tensors (inf for other shapes, nan where one holds NaN)."""
    if a.shape != b.shape:
        return math.inf
    if not a.numel():
        return 0.0
    return float((a.double() - b.double()).abs().max())


def _ref_error(output: torch.Tensor | None, reference: torch.Tensor) -> float:
    if output is None or output.shape != reference.shape:
        return math.nan
    return float((output.float() - reference).abs().max()) if output.numel() else 0.0


# -- thresholds ---------------------------------------------------------


_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _literal_thresholds(source: bytes) -> list[int]:
    """Integer literals ``forward_decode`` compares lengths with (e.g. ``actual_max > 8192``)."""
    require_parseable(source, "the shipped paged_attn.py", strings_nest=False)  # ast: adjacent strings are one node
    found: list[int] = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name != "forward_decode":
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Compare) or not all(isinstance(op, _ORDERING) for op in node.ops):
                continue
            operands = (node.left, *node.comparators)
            # Only comparisons of a length (actual_max, max_seq_len, seq_lens.max()), not of
            # strides or head counts.
            if not any(_is_length(operand) for operand in operands):
                continue
            # A length threshold is at least a block of tokens; 0 and 1 test for emptiness.
            found.extend(value for value in map(_int_value, operands) if value is not None and value >= 16)
    return found


def _int_value(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _is_length(node: ast.expr) -> bool:
    text = ast.unparse(node)
    return _int_value(node) is None and ("max" in text or "len" in text)


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


@dataclass(frozen=True)
class Planned:
    """One case of the grid, built only when it runs, and the kinds of stub ops that run it."""

    function: str
    label: str
    modes: tuple[str, ...]
    build: Callable[[], PrefixCase | DecodeCase] = field(repr=False, compare=False)


SHAPES = tuple(
    Shape(head_dim, block_size, kv, gqa)
    for head_dim, block_size, (kv, gqa) in itertools.product((128, 256), (16, 32), ((2, 1), (2, 2), (1, 6)))
)
HALF_SHAPES = (Shape(128, 16, 2, 2, torch.float16), Shape(256, 16, 1, 6, torch.bfloat16))
# The shapes whose decode cases also run on ops with a working V2.
V2_SHAPES = SHAPES[:3]
# One sequence's context per label: none, one full block, a ragged last block.
TILE_BLOCKS = 32  # _BLOCKS_PER_TILE in the vendor's _forward_prefix_pytorch
# Two groups of 8192 tokens (prefix-pregather's default max_gather_tokens), then 3 tiles and a
# ragged one of 5 blocks, whose last block holds 7 tokens.
LONG_CONTEXT = 2 * 8192 + 3 * TILE_BLOCKS * 16 + 4 * 16 + 7


def _prefix_grid() -> Iterator[Planned]:
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
            build = functools.partial(make_prefix_case, contexts, queries, num_kv_heads=shape.num_kv_heads,
                                      gqa_ratio=shape.gqa_ratio, head_dim=shape.head_dim, block_size=bs,
                                      dtype=shape.dtype, seed=next(seed))
            yield Planned("forward_prefix", f"{shape} {label}: contexts {contexts}, new tokens {queries}",
                          (BI_V100,), build)


def _decode_grid(thresholds: Sequence[tuple[int, str]]) -> Iterator[Planned]:
    seed = itertools.count(1000)
    for shape in (*SHAPES, *HALF_SHAPES):
        bs = shape.block_size
        modes = (BI_V100, V2_WORKS) if shape in V2_SHAPES else (BI_V100,)
        batches: list[tuple[str, list[int], int | None]] = [
            ("one token", [1], None),
            ("one block", [bs], None),
            ("ragged last block", [3 * bs + 5], None),
            ("several sequences", [1, bs, 3 * bs + 5, 100], None),
            ("padded max_seq_len", [37, 100], 4096),
        ]
        for label, lengths, max_seq_len in batches:
            build = functools.partial(make_decode_case, lengths, num_kv_heads=shape.num_kv_heads,
                                      gqa_ratio=shape.gqa_ratio, head_dim=shape.head_dim, block_size=bs,
                                      dtype=shape.dtype, seed=next(seed), max_seq_len=max_seq_len)
            padded = f", max_seq_len {max_seq_len}" if max_seq_len else ""
            yield Planned("forward_decode", f"{shape} {label}: lengths {lengths}{padded}", modes, build)
    # Both sides of each threshold: T tokens stay in the lower tier, T + 1 go up. One cache per
    # head size, as long as the longest, serves every length.
    longest = max((value + 1 for value, _ in thresholds), default=0)
    for head_dim in (128, 256):
        shape = Shape(head_dim, 16, 1, 2)
        modes = (BI_V100, V2_WORKS) if head_dim == 128 else (BI_V100,)
        base = functools.lru_cache(maxsize=1)(functools.partial(
            make_decode_case, [5, longest], num_kv_heads=1, gqa_ratio=2, head_dim=head_dim, block_size=16,
            seed=next(seed)))
        for value, where in thresholds:
            for length in (value, value + 1):
                build = functools.partial(_shortened, base, [5, length])
                yield Planned("forward_decode", f"{shape} threshold {value} ({where}): lengths [5, {length}]",
                              modes, build)


def _shortened(base: Callable[[], DecodeCase], lengths: list[int]) -> DecodeCase:
    return base().with_lengths(lengths)
