"""``patcher verify-numerics`` through the CLI on the demo vendor zip: what it compares, says and documents."""

from __future__ import annotations

import pytest

from tests.fixtures_patches import copy_patch_set, edit_file
from tests.fixtures_vendor import SHIPPED

pytest.importorskip("torch")


def test_the_patch_set_keeps_the_numerics_of_the_fixture(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-numerics", vendor_zip)
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (f"compared {SHIPPED} of {vendor_zip.name}: vendor vs patched "
                        "(three-tier-decode, prefix-pregather, prefix-buffer-reuse)")
    # The class threshold is lowered on both copies, and the output says so.
    assert any(line.startswith("note: PagedAttention._PYTORCH_DECODE_THRESHOLD lowered from 32768 to 9216")
               for line in lines)
    assert ("decode thresholds crossed at T and T+1 tokens: 8192 (a literal in forward_decode), "
            "9216 (PagedAttention._PYTORCH_DECODE_THRESHOLD)") in lines
    text = "\n".join(lines)
    # Which tier ran, per function and ops: every tier of the patched decode is exercised.
    assert "forward_prefix, BI-V100 ops (V2 raises NotImplementedError)" in text
    for tiers in ("PyTorch -> PyTorch", "V1 -> V1", "V1 -> V2 failed, V1", "V1 -> V1 (V2 marked unavailable)",
                  "V1 -> V2"):
        assert f"  {tiers} " in text, tiers
    prefix = next(line for line in lines if line.startswith("  PyTorch -> PyTorch"))
    count = prefix.split()[3]
    assert f"{count} case(s), {count} bitwise equal" in prefix
    assert lines[-1].startswith("result: OK: prefill bitwise equal in all ")


def test_cases_lists_every_shape_of_the_grid(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-numerics", vendor_zip, "--cases")
    assert result.exit_code == 0
    text = result.stdout
    for shape in ("head_dim=128", "head_dim=256", "block=16", "block=32", "gqa=1", "gqa=2", "gqa=6",
                  "float16", "bfloat16"):
        assert shape in text, shape
    for label in ("no context", "one block", "ragged last block", "several sequences", "two tiles each phase",
                  "threshold 8192", "lengths [5, 8193]", "threshold 9216", "lengths [5, 9217]"):
        assert label in text, label


def test_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("verify-numerics", "--help").stdout.split())
    assert ("Exit codes: 0 prefill bitwise equal, decode within fp32 round-off, and every input holding the same "
            "bits after either copy, everywhere; 1 a difference" in text)


def test_the_stub_v1_fails_past_the_policys_v1_length_limit(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A card whose V1 kernel gives up at 9000 tokens: the copies' V1 calls at 9216 tokens fail, on both kinds of ops.
    patches = copy_patch_set(tmp_path / "set")
    edit_file(patches / "policy.toml", "max-tokens = 32768", "max-tokens = 9000")
    result = cli("verify-numerics", vendor_zip, "--patches", patches)
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    error = "vendor: RuntimeError: paged_attention_v1: max_seq_len=9216 exceeds the kernel's shared memory (limit 9000)"
    case = "block=16 kv_heads=1 gqa=2 float32 threshold 9216 (PagedAttention._PYTORCH_DECODE_THRESHOLD): lengths [5, 9216]"
    assert [line for line in lines if line.startswith("DIFFERENT")] == [
        f"DIFFERENT: forward_decode, BI-V100 ops (V2 raises NotImplementedError), head_dim=128 {case}: {error}",
        f"DIFFERENT: forward_decode, BI-V100 ops (V2 raises NotImplementedError), head_dim=256 {case}: {error}",
        f"DIFFERENT: forward_decode, ops with a working V2 (as on upstream GPUs), head_dim=128 {case}: {error}"]
    assert lines[-1] == "result: 3 of 158 comparison(s) differ"
