"""The file ``patcher new`` writes documents every operation's keys, and each commented step loads once uncommented.

The new-patch template writes one ``replace`` step to edit, and the
``insert`` and ``reuse-buffers`` steps as comments: each names every key
its operation takes, and uncommented in place of the ``replace`` step it
is a step the loader builds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.series_file import load_with
from patcher.transforms import OPERATIONS

ID = "decode-fast-path"
REPLACE_STEP = '[[steps]]\nop = "replace"\npattern = "the_code_to_find()"\ncode = "the_code_that_replaces_it()"\n'


def written(cli: Any, team: Path) -> str:
    """Run ``patcher new`` in TEAM (the bundled template: the copy has none of its own) and return the file."""
    result = cli("new", ID, "--target", "vllm/attention/ops/paged_attn.py",
                 "--scope", "PagedAttention._forward_prefix_pytorch", "--patches", team)
    assert result.exit_code == 0, result.output
    return (team / f"{ID}.toml").read_text(encoding="utf-8")


def commented_step(text: str, op: str) -> str:
    """Return the commented ``[[steps]]`` block of OP in TEXT, uncommented (to the next block or the end of the comment)."""
    start = text.index(f'# [[steps]]\n# op = "{op}"\n')
    lines = []
    for line in text[start:].splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# '") or (lines and line == "#" and not lines[-1]):
            break  # the next operation's explanation, or the end of this one
        lines.append(line[2:] if line.startswith("# ") else "")
    return "\n".join(lines).strip("\n") + "\n"


@pytest.mark.parametrize("op", ["insert", "reuse-buffers"])
def test_the_template_names_every_key_of_each_operation(cli: Any, team: Path, op: str) -> None:
    text = written(cli, team)
    comments = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    for key in sorted(OPERATIONS[op].keys):
        assert re.search(rf"'{key}'|^# {key} =", comments, re.MULTILINE), (op, key)


@pytest.mark.parametrize("op", ["insert", "reuse-buffers"])
def test_each_commented_step_loads_once_uncommented(cli: Any, team: Path, op: str) -> None:
    text = written(cli, team)
    assert REPLACE_STEP in text
    step = commented_step(text, op)
    (team / f"{ID}.toml").write_text(text.replace(REPLACE_STEP, step), encoding="utf-8")
    patch = next(p for p in load_with(team, include=[ID]).patches if p.id == ID)
    (built,) = patch.steps
    assert built.name == op
    if op == "reuse-buffers":
        assert [b.temporary for b in built.buffers] == ["m_new"]  # type: ignore[attr-defined]
