"""Turn a ``NumericsResult`` into ``verify-numerics``' report lines and exit code (no PyTorch needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..report import ExitCode

if TYPE_CHECKING:
    from .compare import Comparison, NumericsResult


@dataclass(frozen=True)
class NumericsReport:
    """What ``verify-numerics`` prints: per function and ops, the tiers each copy ran and how close they are."""

    result: "NumericsResult"
    label: str  # which file was compared, and from where

    @property
    def exit_code(self) -> ExitCode:
        """1 when outputs or the inputs the copies leave differ (prefill bitwise, decode past fp32 round-off), else 0."""
        return ExitCode.DIFFERENCE if self.result.failed else ExitCode.OK

    def lines(self, cases: bool = False) -> list[str]:
        """The report for stdout; ``cases`` lists every comparison, not only one line per tier."""
        result = self.result
        out = [f"compared {self.label}"]
        out += [f"note: {note}" for note in result.notes]
        writes = result.in_place_writes
        # Both copies leave the same bits, and inputs are fresh copies per call: worth knowing, not a difference.
        out += [f"warning: {write.message}; both leave the same values, and each call got fresh copies of its "
                "inputs, so it does not affect the comparison" for write in writes if write.equal]
        crossed = ", ".join(f"{tokens} ({where})" for tokens, where in result.thresholds) or "none found"
        out.append(f"decode thresholds crossed at T and T+1 tokens: {crossed}")
        groups: dict[tuple[str, str], list["Comparison"]] = {}
        for comparison in result.comparisons:
            groups.setdefault((comparison.function, comparison.ops), []).append(comparison)
        for (function, ops), group in groups.items():
            out.append(f"{function}, {ops}: {len(group)} case(s); vendor tier -> patched tier:")
            tiers: dict[tuple[str, str], list["Comparison"]] = {}
            for comparison in group:
                tiers.setdefault((comparison.vendor_tier, comparison.patched_tier), []).append(comparison)
            for (vendor, patched), members in tiers.items():
                out.append(f"  {vendor + ' -> ' + patched:<40} {_closeness(members)}; {_reference_errors(members)}")
                if cases:
                    out += [f"    {c.case}: {_closeness([c])}" for c in members]
        for comparison in result.failed:
            out.append(f"DIFFERENT: {comparison.function}, {comparison.ops}, {comparison.case}: "
                       f"{_differences(comparison)}")
        out += [f"DIFFERENT WRITES: {write.message}" for write in writes if not write.equal]
        prefix = [c for c in result.comparisons if c.function == "forward_prefix"]
        decode = [c for c in result.comparisons if c.function != "forward_prefix"]
        if result.failed:
            out.append(f"result: {len(result.failed)} of {len(result.comparisons)} comparison(s) differ")
        else:
            out.append(f"result: OK: prefill bitwise equal in all {len(prefix)} case(s); "
                       f"decode within fp32 round-off in all {len(decode)}")
        return out


def _differences(comparison: "Comparison") -> str:
    """What differs in one failed comparison: the outputs (or an exception), then each input left differently."""
    parts = [] if comparison.outputs_ok else [comparison.error or _closeness([comparison], writes=False)]
    return "; ".join(parts + [write.message for write in comparison.written_differently])


def _reference_errors(group: "list[Comparison]") -> str:
    """Each copy's worst error against the independent reference, per input dtype."""
    parts = []
    for dtype in dict.fromkeys(c.dtype for c in group):
        members = [c for c in group if c.dtype == dtype]
        vendor = max((c.vendor_ref_error for c in members), key=lambda e: (e == e, e))
        patched = max((c.patched_ref_error for c in members), key=lambda e: (e == e, e))
        parts.append(f"{dtype} {vendor:.1e}/{patched:.1e}")
    return "max error vs reference (vendor/patched): " + ", ".join(parts)


def _closeness(group: "list[Comparison]", writes: bool = True) -> str:
    """How many cases, how many bitwise equal, how far apart, and (``writes``) how many leave inputs differently."""
    equal = sum(c.equal for c in group)
    errors = [c for c in group if c.error]
    written = sum(bool(c.written_differently) for c in group)
    text = f"{len(group)} case(s), {equal} bitwise equal"
    if errors:
        text += f", {len(errors)} raised"
    elif equal < len(group):
        worst = max(group, key=lambda c: c.max_abs_diff)
        text += f", max abs diff {worst.max_abs_diff:.3g} (tolerance {worst.tolerance:.3g})"
    if written and writes:
        text += f", {written} leave different contents in their inputs"
    return text
