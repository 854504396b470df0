"""What verify-numerics calls a difference: a prefill moved by one ulp (bitwise, never "close enough"), a decode past round-off."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from patcher.numerics import compare  # noqa: E402
from patcher.numerics.compare import compare_sources  # noqa: E402

from tests.fixtures_patches import (VENDOR_SOURCE, add_patch, copy_patch_set, edit_file, patch_toml,  # noqa: E402
                                   replace_step)


RETURN = "            return output\n        except Exception:\n"


# One element of the prefill output moves by one unit in the last place, in its own dtype.
NUDGED = """\
            ints = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
            output.view(-1).view(ints[output.dtype])[0] += 1
""" + RETURN


def test_a_one_ulp_prefill_change_is_reported() -> None:
    vendor = VENDOR_SOURCE
    text = vendor.decode()
    assert text.count(RETURN) == 1  # the end of _forward_prefix_pytorch
    patched = text.replace(RETURN, NUDGED).encode()
    result = compare_sources(vendor, patched)
    prefix = [c for c in result.comparisons if c.function == "forward_prefix"]
    assert {c.dtype for c in prefix} == {"float32", "float16", "bfloat16"}
    assert [c.case for c in prefix if c.ok] == []  # every prefill case is a difference
    assert all(not c.equal and c.error is None and 0 < c.max_abs_diff < 1e-2 for c in prefix)
    assert all(c.ok for c in result.comparisons if c.function == "forward_decode")
    unchanged = compare._Pair(vendor, vendor, compare.BI_V100, compare.V1_LIMIT)
    assert all(unchanged.prefix(p.build(), p.label).ok for p in list(compare._prefix_grid())[:3])


def _ulp_patch_set(tmp_path: Path) -> Path:
    """The shipped patch set and one more patch: every prefill output one ulp up."""
    return add_patch(copy_patch_set(tmp_path / "set"), "prefix-one-ulp", patch_toml(
        "prefix-one-ulp", replace_step("o.div_(l.unsqueeze(-1))", """
            o.div_(l.unsqueeze(-1))
            o.copy_(torch.nextafter(o, torch.full_like(o, float('inf'))))
        """), scope="PagedAttention._forward_prefix_pytorch", target="vllm/attention/ops/paged_attn.py",
        description="Nudge every prefill output one ulp up (a test of verify-numerics)", last_update="2026-12-01"))


def test_a_one_ulp_change_to_prefill_is_a_prefill_difference(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-numerics", vendor_zip, "--patches", _ulp_patch_set(tmp_path))
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    different = [line for line in lines if line.startswith("DIFFERENT:")]
    assert different and all(line.startswith("DIFFERENT: forward_prefix") for line in different)
    # Every fp32 case differs; the differences are tiny and still not "near equal": tolerance 0.
    fp32 = [line for line in different if "float32" in line]
    assert fp32 and all("tolerance 0)" in line for line in different)
    diffs = [float(line.split("max abs diff ")[1].split()[0]) for line in fp32]
    assert 0 < max(diffs) < 1e-6
    assert lines[-1].startswith(f"result: {len(different)} of ") and lines[-1].endswith("differ")
    assert "write into `query`" in "\n".join(lines)  # the finding is still there, once
    assert sum(line.startswith("warning:") for line in lines) == 1


def test_a_patch_that_changes_prefill_results_fails(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A plausible-looking mistake: the pre-gathered context in the wrong block order.
    patches = copy_patch_set(tmp_path / "set")
    edit_file(patches.parent / "templates" / "prefix-pregather" / "gather_group.py.j2",
              "$TABLES[$SEQ, grp_blk:grp_end]", "$TABLES[$SEQ, grp_blk:grp_end].flip(0)")
    result = cli("verify-numerics", vendor_zip, "--patches", patches)
    assert result.exit_code == 1
    different = [line for line in result.stdout.splitlines() if line.startswith("DIFFERENT: forward_prefix")]
    assert different and all("max abs diff" in line and "tolerance 0" in line for line in different)
    assert not any(line.startswith("DIFFERENT: forward_decode") for line in result.stdout.splitlines())
    assert result.stdout.splitlines()[-1].startswith("result: ")
    assert "differ" in result.stdout.splitlines()[-1]
    # The vendor's in-place write is still reported, once, beside the differences.
    assert sum(line.startswith("warning:") for line in result.stdout.splitlines()) == 1


def test_a_decode_that_drifts_past_round_off_fails() -> None:
    vendor = VENDOR_SOURCE
    old = b"            return PagedAttention._forward_decode_pytorch(\n                query, key_cache, value_cache, block_tables, seq_lens, scale)"
    assert old in vendor
    patched = vendor.replace(old, old.replace(b"seq_lens, scale)", b"seq_lens, scale * 1.001)"))
    result = compare_sources(vendor, patched)
    assert result.failed
    assert {c.function for c in result.failed} == {"forward_decode"}
    assert {(c.vendor_tier, c.patched_tier) for c in result.failed} == {("PyTorch", "PyTorch")}
    assert all(c.max_abs_diff > c.tolerance > 0 for c in result.failed)
