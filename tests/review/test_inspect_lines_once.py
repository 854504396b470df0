"""inspect says each thing once: an install a loop repeats is one line and one warning."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.fixtures_cli import INSTALLED
from tests.fixtures_vendor import SHIPPED

COREX_ROOT = "/usr/local/corex/lib/python3/dist-packages"

# A later-style script: a loop over candidate roots, one of them spelt twice (with a trailing
# slash), then the same copy again outside the loop; no 'set -e', so each copy can fail silently.
REPEATING_SCRIPT = f"""\
for root in {COREX_ROOT} {COREX_ROOT}/; do
  cp ./paged_attn.py $root/vllm/attention/ops/paged_attn.py
done
cp ./paged_attn.py {INSTALLED}
"""


def repeating_installs(tree: Path) -> Path:
    """Make patch_ops.sh install the shipped paged_attn.py at the same image path three times."""
    (tree / "qwen3_6_scripts" / "patch_ops.sh").write_text(REPEATING_SCRIPT)
    return tree


def test_an_install_a_loop_repeats_is_said_once(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", repeating_installs(vendor_copy))
    assert result.exit_code == 0, result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert [line for line, count in Counter(lines).items() if count > 1] == []
    installs = [line for line in result.stdout.splitlines() if line.endswith(f"{SHIPPED} -> {INSTALLED}")]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    # However the reader counts the copies (each one, or the last that lands there), one line each.
    assert installs and len(warnings) == len(installs)
    assert all(f"copying the patched {SHIPPED} to {INSTALLED} fails" in w for w in warnings)
