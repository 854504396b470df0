"""``benchmarks/gpu_prefix.py`` stays runnable: a tiny smoke run on the CPU (the timings are meaningless)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conftest import ROOT, SHIPPED, VENDOR_TREE

pytest.importorskip("torch")
GOLDEN = Path(__file__).parent / "golden" / "paged_attn.patched.py"


def _benchmark():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpu_prefix", ROOT / "benchmarks" / "gpu_prefix.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SMOKE = ["--device", "cpu", "--contexts", "0,600", "--chunks", "40", "--runs", "1", "--warmup", "0"]


def test_patches_the_vendor_zip_in_process_and_finds_the_outputs_bitwise_equal(capsys) -> None:  # type: ignore[no-untyped-def]
    assert _benchmark().main(SMOKE) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {SHIPPED} of enginex-vllm-bi100-qwen36-main.zip: vendor vs three-tier-decode")
    rows = [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]
    assert [(r[0], r[1], r[-1]) for r in rows] == [("0", "40", "yes"), ("600", "40", "yes")]
    assert out.rstrip().endswith("bitwise equal in every configuration: yes")


def test_takes_two_files_and_reports_a_difference(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "broken.py"
    broken.write_text(GOLDEN.read_text().replace("scale        = 1.0 / (head_dim ** 0.5)",
                                                  "scale        = 1.01 / (head_dim ** 0.5)"))
    vendor = str(VENDOR_TREE / SHIPPED)
    assert _benchmark().main([*SMOKE, "--vendor-py", vendor, "--patched-py", str(broken)]) == 1
    assert "bitwise equal in every configuration: NO" in capsys.readouterr().out
