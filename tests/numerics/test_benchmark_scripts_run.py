"""The numerics benchmarks stay runnable: smoke runs on the CPU (the timings are meaningless, the equality is not).

``benchmarks/gpu_prefix.py`` compares the committed plain files without
patcher's dependencies, patches a vendor zip in process, and reports a
patched copy that differs; ``benchmarks/cpu_prefix_memory.py`` prints its
table and the peak memory the patch adds; ``benchmarks/verify_numerics.py
--plain`` times verify-numerics' comparisons on the committed plain files
with PyTorch alone.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_patches import PATCHED
from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

pytest.importorskip("torch")


SCRIPT = ROOT / "benchmarks" / "gpu_prefix.py"


def _benchmark():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpu_prefix", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SMOKE = ["--device", "cpu", "--contexts", "0,600", "--chunks", "40", "--runs", "1", "--warmup", "0"]


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]


def test_by_default_compares_the_committed_plain_files_without_patcher_deps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # As on the GPU machine: PyTorch, but neither libcst nor click importable.
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nfor name in ('libcst', 'click', 'jinja2'):\n    sys.modules[name] = None\n")
    done = subprocess.run([sys.executable, str(SCRIPT), *SMOKE], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"# fixtures/vendor/{VENDOR_TREE.name}/{SHIPPED} vs gather 8192: "
                          "tests/golden/paged_attn.patched.py, gather 0: tests/golden/paged_attn.patched-gather0.py")
    assert "vendor ms" in out and "patched ms" in out and "ratio" in out and "vendor MiB" in out
    assert [(r[0], r[1], " ".join(r[2:4]), r[-1]) for r in _rows(out)] == [
        ("0", "40", "gather 8192", "yes"), ("0", "40", "gather 0", "yes"),
        ("600", "40", "gather 8192", "yes"), ("600", "40", "gather 0", "yes")]
    assert out.rstrip().endswith("bitwise equal in every configuration: yes")


def test_patches_a_vendor_zip_in_process(capsys) -> None:  # type: ignore[no-untyped-def]
    zip_path = ROOT / "fixtures" / "enginex-vllm-bi100-qwen36-main.zip"
    args = [*SMOKE, "--zip", str(zip_path), "--set", "prefix-pregather.max_gather_tokens=512"]
    assert _benchmark().main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {SHIPPED} of enginex-vllm-bi100-qwen36-main.zip: vendor vs three-tier-decode, "
                          "prefix-pregather, prefix-buffer-reuse --set prefix-pregather.max_gather_tokens=512")
    assert [(r[0], r[-1]) for r in _rows(out)] == [("0", "yes"), ("600", "yes")]


def test_takes_plain_files_and_reports_a_difference(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "broken.py"
    broken.write_text(PATCHED.read_text().replace("scale        = 1.0 / (head_dim ** 0.5)",
                                                  "scale        = 1.01 / (head_dim ** 0.5)"))
    vendor = str(VENDOR_TREE / SHIPPED)
    args = [*SMOKE, "--vendor-py", vendor, "--patched-py", f"good={PATCHED}", "--patched-py", f"broken={broken}"]
    assert _benchmark().main(args) == 1
    out = capsys.readouterr().out
    assert [(r[2], r[-1]) for r in _rows(out)] == [("good", "yes"), ("broken", "NO")] * 2
    assert "bitwise equal in every configuration: NO" in out


def test_cpu_memory_benchmark_runs_on_a_tiny_size() -> None:
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux /proc")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu_prefix_memory.py"),
                           "--context", "700", "--chunk", "8"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("vendor", "patched"))]
    assert [row.split("  ")[0] for row in rows] == ["vendor", "patched, max_gather_tokens=8192 (default)",
                                                   "patched, max_gather_tokens=0"]
    assert all(len(row.split()[-3:]) == 3 for row in rows)
    assert lines[-1].startswith("# extra peak resident memory of 'patched, max_gather_tokens=8192 (default)' "
                                "over the vendor's at 700 context tokens, fp32: ")
    assert lines[-1].endswith("MB (under 64.0 MB)")


def test_verify_numerics_benchmark_compares_the_plain_files_without_patcher_deps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nfor name in ('libcst', 'click', 'jinja2'):\n    sys.modules[name] = None\n")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "verify_numerics.py"), "--plain", "--threads", "1"],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"# compare fixtures/vendor/{VENDOR_TREE.name}/{SHIPPED} with "
                               "tests/golden/paged_attn.patched.py; load average ")
    assert lines[1].split()[:2] == ["import", "torch"] and lines[1].endswith(" s CPU")
    assert lines[2].startswith("  compare, 1 thread(s), 158 cases ") and "DIFFER" not in lines[2]
    assert len(lines) == 4
