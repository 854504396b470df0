"""``check`` on shapes real versions of the shipped paged_attn.py took (VENDOR.md), written here anew.

Each test edits the vendor tree the way such a version differs from the
release, and asserts the whole verdict: which rules fire, and that no
other does (a false positive is as serious as a miss).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_vendor import SHIPPED

V1_OVERRIDE = "        use_v1 = True  # BI-V100: the V2 kernel is not available\n"
THRESHOLD = "    _PYTORCH_DECODE_THRESHOLD = 32768\n"
PYTORCH_DECODE = "            return PagedAttention._forward_decode_pytorch(\n"


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))


def _edit(tree: Path, old: str, new: str) -> None:
    file = tree / SHIPPED
    text = file.read_bytes().decode()
    assert old in text, f"the vendor file no longer holds {old!r}"
    file.write_bytes(text.replace(old, new, 1).encode())


def _verdict(cli, source: Path) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    """The exit code, and 'severity rule' for every line of ``check`` (the install-script warning left out)."""
    result = cli("check", source)
    rows = [row.split(": ")[0] + " " + row.split(": ")[2] for row in result.stdout.splitlines()
            if "install-fails-loudly" not in row]
    return result.exit_code, rows


def _line_of(tree: Path, text: str) -> int:
    lines = (tree / SHIPPED).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_v2_through_the_heuristic_with_a_pytorch_substitute_and_a_raised_threshold_passes(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # V1 only under the heuristic's 8192 bound; past it a PyTorch V2; PyTorch decode past 65536.
    _edit(vendor_copy, V1_OVERRIDE, "")
    _edit(vendor_copy, "            ops.paged_attention_v2(\n",
          "            PagedAttention._paged_attention_v2_pytorch(\n")
    _edit(vendor_copy, THRESHOLD, "    _PYTORCH_DECODE_THRESHOLD = 65536\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, [])


def test_a_raised_threshold_in_front_of_an_unbounded_v1_warns(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # The override kept: V1 runs at every length up to the threshold.
    _edit(vendor_copy, THRESHOLD, "    _PYTORCH_DECODE_THRESHOLD = 999999\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, ["warning v1-length-limit", "note v2-needs-fallback"])


def test_ixformer_v2_past_32k_with_the_pytorch_decode_never_called_fails(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    _edit(vendor_copy, PYTORCH_DECODE,
          "            import ixformer.functions as ixf_f\n"
          "            return ixf_f.vllm_paged_attention_decode_long(\n")
    code, rows = _verdict(cli, make_zip(vendor_copy))
    assert (code, rows) == (1, ["error keep-pytorch-fallbacks", "note v2-needs-fallback"])
    result = cli("check", make_zip(vendor_copy))
    assert "forward_decode never calls _forward_decode_pytorch" in result.stdout


def test_a_diagnostics_version_with_env_flags_and_validation_helpers_passes(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    _edit(vendor_copy, "import torch\n", (
        "import os\nimport torch\n\n"
        "_PA_DEBUG = os.environ.get(\"PA_DEBUG\", \"0\") == \"1\"\n"
        "_PA_LOGGED = set()\n\n\n"
        "def _log_once(key, message):\n"
        "    if key not in _PA_LOGGED:\n"
        "        _PA_LOGGED.add(key)\n"
        "        print(f\"[paged_attn pid={os.getpid()}] {message}\")\n\n\n"
        "def _validate_block_tables(block_tables, num_blocks):\n"
        "    if block_tables.numel() and int(block_tables.max()) >= num_blocks:\n"
        "        raise RuntimeError(\"block table points past the cache\")\n\n\n"
        "def _log_triton_disabled():\n"
        "    _log_once(\"triton\", \"Triton prefill stays off on BI-V100\")\n"))
    _edit(vendor_copy, "        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len\n", (
        "        if _PA_DEBUG:\n"
        "            _validate_block_tables(block_tables, key_cache.shape[0])\n"
        "        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len\n"))
    _edit(vendor_copy, "        return PagedAttention._forward_prefix_pytorch(\n",
          "        _log_triton_disabled()\n        return PagedAttention._forward_prefix_pytorch(\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, ["note v2-needs-fallback"])


def test_a_crlf_version_with_a_syntax_error_gets_only_the_python_3_10_error_at_its_line(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    _edit(vendor_copy, "    def forward_prefix(\n", "    def forward_prefix(:\n")
    line = _line_of(vendor_copy, "def forward_prefix(:")
    path = vendor_copy / SHIPPED
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = cli("check", make_zip(vendor_copy))
    assert result.exit_code == 1
    rows = [row for row in result.stdout.splitlines() if "install-fails-loudly" not in row]
    assert len(rows) == 1 and rows[0].startswith(f"error: {SHIPPED}:{line}: python-3.10: does not parse: ")
