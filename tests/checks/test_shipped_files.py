"""Only what ships is checked: the Python files the Dockerfile and install script put in the image, as they will be written."""

from __future__ import annotations

from patcher.checks import check_tree
from patcher.checks.examples import MemoryTree
from patcher.checks.inputs import check_path
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.checks.runner import shipped_python
from patcher.shipping import plan_shipping

from tests.fixtures_rules import POLICY
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

KERNEL_IMPORT = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
INSTALL = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/paged_attn.py\n"


def test_only_shipped_python_files_are_read() -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL, "qwen3_6_scripts/notes.txt": "python notes\n",
                       "unshipped.py": KERNEL_IMPORT.decode()}, executable=[EXAMPLE_SCRIPT])
    assert shipped_python(plan_shipping(tree)) == ["qwen3_6_scripts/other.py", EXAMPLE_TARGET]


def test_changes_are_checked_instead_of_the_trees_files() -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL}, executable=[EXAMPLE_SCRIPT])
    plan = plan_shipping(tree)
    before = check_tree(tree, plan, POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    after = check_tree(tree, plan, POLICY, changes={EXAMPLE_TARGET: b"x = 1\n" + KERNEL_IMPORT},
                       targets=[EXAMPLE_TARGET], use_cache=False)
    assert before.violations == ()
    assert [(v.rule, v.path, v.line) for v in after.violations] == [("no-triton-kernels", EXAMPLE_TARGET, 2)]


def test_a_target_the_tree_does_not_ship_leaves_the_others_checked() -> None:
    # A patch set may change files of other vendor layouts too: only the shipped ones have an install.
    alone = check_path(VENDOR_ZIP, POLICY, targets=[SHIPPED])
    after_unshipped = check_path(VENDOR_ZIP, POLICY, targets=["vllm/not_in_this_drop.py", SHIPPED])
    loud = [(v.path, v.line) for v in alone.violations if v.rule == "install-fails-loudly"]
    assert loud == [("qwen3_6_scripts/patch_ops.sh", 8)]
    assert after_unshipped.violations == alone.violations
