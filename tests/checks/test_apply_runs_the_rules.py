"""``apply`` runs the safety rules on the files as it would write them: an error stops it before anything is written
(exit 2, one line per violation with its why), a warning is printed and the context is written."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.fixtures_rules import edit, line_of, reenable_triton
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED


def _refused(result, output: Path, rule: str) -> list[str]:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.stderr
    assert not output.exists()
    assert "nothing written: " in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("error: ") and f": {rule}: " in line]


def test_apply_refuses_triton_import_reenabled_under_has_triton(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    reenable_triton(vendor_copy)
    source = make_zip(vendor_copy)
    result = cli("apply", source, "-o", "ctx.tar.gz")
    errors = _refused(result, cli.cwd / "ctx.tar.gz", "no-triton-kernels")
    line = line_of(vendor_copy, SHIPPED, "    from vllm.attention.ops.prefix_prefill import")
    assert errors == [
        f"error: {SHIPPED}:{line}: no-triton-kernels: imports context_attention_fwd from "
        "vllm.attention.ops.prefix_prefill, under `if HAS_TRITON:` (why: the BI-V100 runtime does not support "
        "the PTX that Triton compiles: the Triton context_attention_fwd kernel hangs the card permanently (no "
        "error, no timeout; only a host reboot brings it back), and so does installing the other card family's "
        "Triton build, or any kernel torch.compile writes with its default backend, TorchInductor (Triton code for "
        "the GPU); a hang cannot be caught by try/except, so no Triton kernel may be defined, imported, called, "
        "compiled or installed in what ships)"
    ]


def test_apply_refuses_a_v2_call_without_a_v1_fallback(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # Another shipped file grows a V2 call whose handler gives up instead of falling back.
    edit(vendor_copy, "qwen3_6_scripts/qwen3_5.py", "\n", "\n" + (
        "from vllm import _custom_ops as ops\n\n\n"
        "def decode_fast(output, query):\n"
        "    try:\n"
        "        ops.paged_attention_v2(output, query)\n"
        "    except NotImplementedError:\n"
        "        return None\n"
    ))
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx")
    errors = _refused(result, cli.cwd / "ctx", "v2-needs-fallback")
    line = line_of(vendor_copy, "qwen3_6_scripts/qwen3_5.py", "ops.paged_attention_v2(")
    assert len(errors) == 1
    assert errors[0].startswith(
        f"error: qwen3_6_scripts/qwen3_5.py:{line}: v2-needs-fallback: ops.paged_attention_v2(...) sits in a try, "
        f"but the handler at line {line + 1} returns before reaching ops.paged_attention_v1 (why: ")


def test_apply_refuses_a_patch_whose_v2_handler_reraises(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The realistic mistake: a patch author "simplifies" the fallback away.
    patch_set = tmp_path / "set"
    shutil.copytree(PATCHES, patch_set / "patches")
    shutil.copytree(ROOT / "templates", patch_set / "templates")
    dispatch = patch_set / "templates" / "three-tier-decode" / "dispatch.py.j2"
    text = dispatch.read_text()
    old = "        PagedAttention._v2_unavailable = True\n        use_v2 = False\n"
    assert old in text
    dispatch.write_text(text.replace(old, "        raise\n"))
    result = cli("apply", vendor_zip, "-o", "ctx.zip", "--patches", patch_set / "patches")
    errors = _refused(result, cli.cwd / "ctx.zip", "v2-needs-fallback")
    assert len(errors) == 1 and "raises before reaching ops.paged_attention_v1" in errors[0], result.stderr


def test_apply_refuses_a_tree_without_forward_decode_pytorch(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    path = vendor_copy / SHIPPED
    text = path.read_text()
    start = text.index("    @staticmethod\n    def _forward_decode_pytorch(")
    end = text.index("    # V1 fails for long contexts")
    path.write_text(text[:start] + text[end:])
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar.gz")
    errors = _refused(result, cli.cwd / "ctx.tar.gz", "keep-pytorch-fallbacks")
    line = line_of(vendor_copy, SHIPPED, "class PagedAttention:")
    assert [e.split(" (why:")[0] for e in errors] == [
        f"error: {SHIPPED}:{line}: keep-pytorch-fallbacks: class PagedAttention has no _forward_decode_pytorch"
    ]


def test_warnings_are_printed_but_do_not_stop_apply(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The bundled set caps large_threshold at 32768 (--set refuses more); a
    # set that lifts the cap still gets the rule's warning.
    lifted = tmp_path / "lifted" / "patches"
    shutil.copytree(PATCHES, lifted)
    shutil.copytree(ROOT / "templates", lifted.parent / "templates")
    toml = lifted / "three-tier-decode.toml"
    toml.write_text(toml.read_text().replace("max = 32768\n", ""))
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--set", "three-tier-decode.large_threshold=65536",
                 "--patches", lifted)
    assert result.exit_code == 0, result.stderr
    assert (cli.cwd / "ctx.tar.gz").is_file()
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert any(f"{SHIPPED}:" in w and ": v1-length-limit: _PYTORCH_DECODE_THRESHOLD = 65536 sends sequences "
               "of 32769 to 65536 tokens to the V1 kernel" in w for w in warnings), warnings
    # The fixture's install script has no `set -e`.
    assert any(w.startswith("warning: qwen3_6_scripts/patch_ops.sh:") and "install-fails-loudly" in w
               and "runs without `set -e`" in w for w in warnings), warnings
