"""inspect's caveats for a patch target are the unread lines that could change the copy the image runs as it.

The shipped file can sit at several image paths (the Dockerfile's COPY of
the scripts folder, then the install script's ``cp`` into dist-packages).
An unread line that edits only another of those copies cannot change what
the image runs as the target: it is listed under "Not read", never as a
caveat of the target.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures_vendor import SHIPPED

SCRIPT = "qwen3_6_scripts/patch_ops.sh"
IMAGE = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
TARGET = "vllm/attention/ops/paged_attn.py"
EDIT = "sed -i 's/a/b/' ./paged_attn.py"  # the scripts folder's own copy, after the install copied it


def _edit_the_leftover_copy(tree: Path) -> int:
    """Add EDIT to patch_ops.sh after the line that installs paged_attn.py; return its line number."""
    script = tree / SCRIPT
    lines = script.read_text().splitlines()
    index = next(i for i, text in enumerate(lines) if text.startswith("cp ./paged_attn.py ")) + 1
    lines.insert(index, EDIT)
    script.write_text("\n".join(lines) + "\n")
    return index + 1


def test_an_unread_edit_of_another_copy_is_no_caveat_of_the_target(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    number = _edit_the_leftover_copy(vendor_copy)
    result = cli("inspect", vendor_copy)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[lines.index("Not read (1)") + 1] == f"  {SCRIPT}:{number}  {EDIT}"  # listed: it was not read
    assert f"  {SHIPPED} -> /workspace/{SHIPPED}, {IMAGE}" in lines  # the file sits at both paths
    assert "could be changed by what was not read" not in result.stdout
    assert "was not read: it could change that" not in result.stderr
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    (target,) = [t for t in data["targets"] if t["target"] == TARGET]
    assert target["unread"] == []
