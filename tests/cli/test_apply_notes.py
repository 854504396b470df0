"""apply prints what the safety rules note, as ``check`` does: ``note: FILE:LINE: RULE: ...``.

A note is what a rule would flag in code that cannot run (a V2 call in the else of
``use_v1 = True; if use_v1:``). It never fails a run; apply says it as check says it, on the
files it judged: what it writes, or the input as it is when a patch failed.
"""

from __future__ import annotations

from pathlib import Path

from make_upgrade_pairs import make_tree
from tests.fixtures_vendor import SHIPPED

DEAD_V2_BRANCH = '''\
from vllm import _custom_ops as ops


def decode(out, query):
    use_v1 = True
    if use_v1:
        ops.paged_attention_v1(out, query)
    else:
        ops.paged_attention_v2(out, query)
'''


def with_dead_v2_branch(tree: Path) -> Path:
    """Ship one more module whose V2 call sits in a branch that cannot run (no patch touches it)."""
    (tree / "qwen3_6_scripts" / "decode_probe.py").write_text(DEAD_V2_BRANCH)
    return tree


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("note: ")]


def test_apply_prints_the_notes_of_what_it_writes_and_still_writes(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", with_dead_v2_branch(vendor_copy), "-o", "ctx")
    assert result.exit_code == 0, result.stderr
    assert _notes(result.stderr) == [
        "note: qwen3_6_scripts/decode_probe.py:9: v2-needs-fallback: ops.paged_attention_v2 at line 9 cannot run: "
        "`use_v1` is always True here (line 5)"]
    # The same line check prints for apply's output: one wording for both commands.
    assert _notes(result.stderr) == _notes(cli("check", cli.cwd / "ctx").stdout)
    assert (cli.cwd / "ctx" / SHIPPED).is_file()


def test_apply_prints_the_inputs_notes_when_a_patch_fails(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = make_tree(tmp_path / "drop", "v2-branch-grows")  # three-tier-decode no longer applies
    result = cli("apply", tree, "-o", "ctx")
    assert result.exit_code == 2
    # The vendor's own forced-V1 dispatch, judged as the input has it.
    [note] = _notes(result.stderr)
    assert note.startswith(f"note: {SHIPPED}:") and "v2-needs-fallback" in note and "cannot run" in note
    assert _notes(result.stderr) == _notes(cli("check", tree).stdout)
    assert not (cli.cwd / "ctx").exists()
