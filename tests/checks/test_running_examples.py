"""Where a rule's example runs: one file read alone at ``example.py``, or a build context held in memory."""

from __future__ import annotations

import pytest

from patcher.archive.tree import SourceFile
from patcher.checks import RULES
from patcher.checks.base import Invalid, Rule, Valid
from patcher.checks.examples import EXAMPLE_PATH, MemoryTree, example_path, run_example
from patcher.checks.install_fails_loudly import EXAMPLE_SCRIPT, EXAMPLE_TARGET

KERNEL_IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"


def test_a_memory_tree_lists_its_files_with_size_and_mode() -> None:
    tree = MemoryTree({"b/tool.py": "LEVEL = 1\n", "a/run.sh": "set -e\r\n"}, executable=["a/run.sh"])
    assert tree.files() == [SourceFile("a/run.sh", 8, True), SourceFile("b/tool.py", 10, False)]
    assert tree.open("b/tool.py").read() == b"LEVEL = 1\n"
    assert tree.read("a/run.sh") == b"set -e\r\n"
    assert tree.exists("a/run.sh") and not tree.exists("a") and tree.sha256() is None
    with pytest.raises(KeyError):
        tree.read("c.py")


def test_a_file_rules_example_is_read_at_example_py_unless_it_has_files() -> None:
    rule = RULES["no-triton-kernels"]
    assert example_path(rule, Valid("x = 1\n")) == EXAMPLE_PATH == "example.py"
    assert example_path(rule, Valid("x = 1\n", files={"qwen3_6_scripts/other.py": "y = 2\n"})) == EXAMPLE_TARGET
    assert example_path(rule, Valid("x = 1\n", path="vllm/x.py")) == "vllm/x.py"
    assert example_path(RULES["install-fails-loudly"], Valid("set -e\n")) == EXAMPLE_SCRIPT
    assert [(v.path, v.line) for v in run_example(rule, Invalid(KERNEL_IMPORT, 1, "imports"))] == [("example.py", 1)]


def test_a_rule_of_neither_kind_is_refused_by_name() -> None:
    class Neither(Rule):
        ID = "neither"

    with pytest.raises(TypeError, match="^rule neither is neither a file rule nor a tree rule$"):
        run_example(Neither(), Valid("x = 1\n"))
