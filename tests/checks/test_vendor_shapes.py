"""``check``'s whole verdict on the vendor release and on shapes real versions of the shipped paged_attn.py took (VENDOR.md).

Each test edits the vendor tree the way such a version differs from the
release, written here anew, and asserts which rules fire and that no other
does (a false positive is as serious as a miss). The release passes, noting
its V2 call that cannot run; its stale root copies are never shipped, so
never checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures_rules import V1_OVERRIDE, edit, error_rows, line_of
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

THRESHOLD = "    _PYTORCH_DECODE_THRESHOLD = 32768\n"
PYTORCH_DECODE = "            return PagedAttention._forward_decode_pytorch(\n"


def _verdict(cli, source: Path) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    """The exit code, and 'severity rule' for every line of ``check`` (the install-script warning left out)."""
    result = cli("check", source)
    rows = [row.split(": ")[0] + " " + row.split(": ")[2] for row in result.stdout.splitlines()
            if "install-fails-loudly" not in row]
    return result.exit_code, rows


def test_the_vendor_release_passes_noting_its_dead_v2_call_and_its_unshipped_copies_are_not_checked(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", vendor_zip)
    assert result.exit_code == 0, result.stdout + result.stderr
    line = line_of(VENDOR_TREE, SHIPPED, "ops.paged_attention_v2(")
    override = line_of(VENDOR_TREE, SHIPPED, "use_v1 = True")
    assert not [row for row in result.stdout.splitlines() if row.startswith("error: ")]
    assert [row for row in result.stdout.splitlines() if row.startswith("note: ")] == [
        f"note: {SHIPPED}:{line}: v2-needs-fallback: ops.paged_attention_v2 at line {line} cannot run: "
        f"`use_v1` is always True here (line {override})"
    ]
    # The stale root copies import the Triton kernel, but never reach the image.
    assert "context_attention_fwd" in (VENDOR_TREE / "__init__.py").read_text()
    assert "no-triton-kernels" not in result.stdout
    assert "passes: 0 error(s), 1 warning(s), 0 allowed, 1 note(s)" in result.stderr


def test_the_stale_root_copies_that_import_the_triton_kernel_are_not_checked(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    # The root copies import context_attention_fwd unconditionally, but the Dockerfile never ships them.
    assert "from vllm.attention.ops.prefix_prefill import context_attention_fwd" in \
        (VENDOR_TREE / "paged_attn.py").read_text()
    result = cli("check", vendor_zip, "--format", "json")
    assert result.exit_code == 0
    assert not [v for v in json.loads(result.stdout)["violations"] if v["rule"] == "no-triton-kernels"]


def test_the_vendor_release_without_its_use_v1_override_fails(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, V1_OVERRIDE, "")
    result = cli("check", make_zip(vendor_copy))
    assert result.exit_code == 1
    line = line_of(vendor_copy, SHIPPED, "ops.paged_attention_v2(")
    assert error_rows(result.stdout) == [
        f"error: {SHIPPED}:{line}: v2-needs-fallback: ops.paged_attention_v2(...) is called outside any try, "
        "so nothing falls back to ops.paged_attention_v1"
    ]
    assert not [row for row in result.stdout.splitlines() if row.startswith("note: ")]
    assert "fails: 1 error(s)" in result.stderr


def test_v2_through_the_heuristic_with_a_pytorch_substitute_and_a_raised_threshold_passes(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # V1 only under the heuristic's 8192 bound; past it a PyTorch V2; PyTorch decode past 65536.
    edit(vendor_copy, SHIPPED, V1_OVERRIDE, "")
    edit(vendor_copy, SHIPPED, "            ops.paged_attention_v2(\n",
         "            PagedAttention._paged_attention_v2_pytorch(\n")
    edit(vendor_copy, SHIPPED, THRESHOLD, "    _PYTORCH_DECODE_THRESHOLD = 65536\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, [])


def test_a_raised_threshold_in_front_of_an_unbounded_v1_warns(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # The override kept: V1 runs at every length up to the threshold.
    edit(vendor_copy, SHIPPED, THRESHOLD, "    _PYTORCH_DECODE_THRESHOLD = 999999\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, ["warning v1-length-limit", "note v2-needs-fallback"])


def test_ixformer_v2_past_32k_with_the_pytorch_decode_never_called_fails(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, PYTORCH_DECODE,
         "            import ixformer.functions as ixf_f\n"
         "            return ixf_f.vllm_paged_attention_decode_long(\n")
    code, rows = _verdict(cli, make_zip(vendor_copy))
    assert (code, rows) == (1, ["error keep-pytorch-fallbacks", "note v2-needs-fallback"])
    result = cli("check", make_zip(vendor_copy))
    assert "forward_decode never calls _forward_decode_pytorch" in result.stdout


def test_a_diagnostics_version_with_env_flags_and_validation_helpers_passes(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, "import torch\n", (
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
    edit(vendor_copy, SHIPPED, "        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len\n", (
        "        if _PA_DEBUG:\n"
        "            _validate_block_tables(block_tables, key_cache.shape[0])\n"
        "        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len\n"))
    edit(vendor_copy, SHIPPED, "        return PagedAttention._forward_prefix_pytorch(\n",
         "        _log_triton_disabled()\n        return PagedAttention._forward_prefix_pytorch(\n")
    assert _verdict(cli, make_zip(vendor_copy)) == (0, ["note v2-needs-fallback"])


def test_a_crlf_version_with_a_syntax_error_gets_only_the_python_3_10_error_at_its_line(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    edit(vendor_copy, SHIPPED, "    def forward_prefix(\n", "    def forward_prefix(:\n")
    line = line_of(vendor_copy, SHIPPED, "def forward_prefix(:")
    path = vendor_copy / SHIPPED
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = cli("check", make_zip(vendor_copy))
    assert result.exit_code == 1
    rows = [row for row in result.stdout.splitlines() if "install-fails-loudly" not in row]
    assert len(rows) == 1 and rows[0].startswith(f"error: {SHIPPED}:{line}: python-3.10: does not parse: ")
