"""``patcher inspect`` on the demo zip: what the Dockerfile copies and runs, where each file lands, the
patch targets' shipped copies, what never ships, and the warning that a failed copy would go unnoticed.
"""

from __future__ import annotations

from tests.fixtures_cli import COREX, INSTALLED
from tests.fixtures_vendor import SHIPPED


def test_inspect_shows_what_the_demo_zip_ships_and_where(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", vendor_zip)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    for expected in (
        "     3  WORKDIR /workspace",
        "     4  COPY qwen3_6_scripts -> /workspace/qwen3_6_scripts (10 files)",
        "     5  RUN /workspace/qwen3_6_scripts/patch_ops.sh (in /workspace/qwen3_6_scripts)",
        "  qwen3_6_scripts/patch_ops.sh (Dockerfile line 5; no 'set -e': a failed command does not stop the build)",
        f"     8  {SHIPPED} -> {INSTALLED}",
        f"    23  qwen3_6_scripts/reasoning/__init__.py -> {COREX}/reasoning/__init__.py",
        "    28  qwen3_6_scripts/chat_template.jinja -> /workspace/templates/qwen3_6.jinja",
        f"  vllm/attention/ops/paged_attn.py <- {SHIPPED}",
        f"        -> {INSTALLED}",
        "        stale copies synced by apply: paged_attn.py",
        "        patches: three-tier-decode, prefix-pregather, prefix-buffer-reuse",
        f"  {SHIPPED} -> /workspace/{SHIPPED}, {INSTALLED}",
        "  paged_attn.py",  # never shipped: the stale root copy
        "  vllm/ (8 files)",  # a folder that ships nothing is folded
    ):
        assert expected in lines, expected
    never = lines[lines.index("Never shipped (16 files)") + 1:]
    assert "  Dockerfile" in never and not any(line.startswith("  qwen3_6_scripts") for line in never)
    assert result.stderr == (
        f"warning: qwen3_6_scripts/patch_ops.sh:8: if copying the patched {SHIPPED} to {INSTALLED} fails, "
        "the build goes on (no 'set -e') and the image silently keeps the vendor's unpatched file; "
        "add 'set -e' at the top of the script and drop what hides the error\n")
    assert cli("inspect", "--strict", vendor_zip).exit_code == 1
