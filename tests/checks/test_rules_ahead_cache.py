"""The file rules' forked child judges only what the rule cache does not know, and no file is parsed twice.

``FileRulesAhead`` asks the rule cache first: what it knows is answered at
once, and a warm run forks no child and waits for none. The child's
findings go into the cache (a patch target is then known as the input has
it). Files that mention a tree rule's word stay here: the file rules parse
them here, and the tree rules read that parse.
"""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from patcher.checks import check_tree, run_rules
from patcher.checks import runner
from patcher.checks.examples import MemoryTree
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.checks.runner import FileRulesAhead, Pending
from patcher.shipping import plan_shipping

from tests.fixtures_rules import POLICY, readers

KERNEL_IMPORT = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
FILES = {"kernel.py": KERNEL_IMPORT, "clean.py": b"x = 1\n", "other.py": b"def f(a):\n    return a\n"}
# As the vendor's vLLM does: Triton's cache manager, no kernel. The tree rule reads it.
CACHE_MANAGER = "from vllm.triton_utils import maybe_set_triton_cache_manager\nmaybe_set_triton_cache_manager()\n"
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the rules run ahead only where fork exists")


def _rules(result: dict[str, Any]) -> dict[str, list[str]]:
    return {path: [v.rule for v in entry[1]] for path, entry in result.items()}


@needs_fork
def test_no_child_when_the_cache_knows_every_file(rule_cache: Path) -> None:
    run_rules(readers(FILES), POLICY)  # fills the cache
    with FileRulesAhead(FILES, POLICY) as ahead:
        assert ahead._pid is None  # nothing to fork for, nothing to wait for
        assert _rules(ahead.results()) == {"kernel.py": ["no-triton-kernels"], "clean.py": [], "other.py": []}
        assert ahead.results()["kernel.py"][0] == hashlib.sha256(KERNEL_IMPORT).hexdigest()


@needs_fork
def test_only_what_the_cache_does_not_know_goes_to_the_child(rule_cache: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    run_rules(readers({"clean.py": FILES["clean.py"]}), POLICY)
    judged = tmp_path / "judged"
    real = runner._judged

    def noting(path: str, data: bytes, rules: Any) -> Any:
        with open(judged, "a") as out:  # written by the child, read here
            out.write(path + "\n")
        return real(path, data, rules)

    monkeypatch.setattr(runner, "_judged", noting)
    with FileRulesAhead(FILES, POLICY) as ahead:
        assert ahead._pid is not None
        assert _rules(ahead.results()) == {"kernel.py": ["no-triton-kernels"], "clean.py": [], "other.py": []}
    assert sorted(judged.read_text().split()) == ["kernel.py", "other.py"]


@needs_fork
def test_what_the_child_found_is_cached(rule_cache: Path) -> None:
    with FileRulesAhead(FILES, POLICY) as first:
        assert first._pid is not None
        found = first.results()
    with FileRulesAhead(FILES, POLICY) as again:
        assert again._pid is None and again.results() == found


@needs_fork
def test_pending_answers_what_the_cache_knew_without_waiting(rule_cache: Path) -> None:
    run_rules(readers({"clean.py": FILES["clean.py"]}), POLICY)
    with FileRulesAhead(FILES, POLICY) as ahead:
        pending = Pending(ahead, ["clean.py", "kernel.py"])
        assert pending["clean.py"][1] == () and ahead._pid is not None  # the child is not waited for
        assert [v.rule for v in pending["kernel.py"][1]] == ["no-triton-kernels"] and ahead._pid is None


@needs_fork
def test_a_file_a_tree_rule_reads_is_judged_here() -> None:
    files = {"uses.py": CACHE_MANAGER.encode(), "clean.py": b"x = 1\n"}
    with FileRulesAhead(files, POLICY, use_cache=False) as ahead:
        assert set(ahead.results()) == {"clean.py"}  # uses.py mentions triton: not the child's


@needs_fork
def test_an_entry_judged_under_another_name_names_the_file(rule_cache: Path) -> None:
    # upgrade hands its child each distinct file once, by digest.
    digest = hashlib.sha256(KERNEL_IMPORT).hexdigest()
    with FileRulesAhead({digest: KERNEL_IMPORT}, POLICY, use_cache=False) as ahead:
        entry = ahead.results()[digest]
    result = run_rules(readers({"qwen3_6_scripts/seq.py": KERNEL_IMPORT}), POLICY, use_cache=False,
                       ahead={"qwen3_6_scripts/seq.py": entry})
    assert [(v.rule, v.path) for v in result.violations] == [("no-triton-kernels", "qwen3_6_scripts/seq.py")]


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the file name of every ``ast.parse`` the rules make (``PythonSource.tree``)."""
    parsed: list[str] = []
    real = ast.parse

    def counting(source: Any, filename: str = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        parsed.append(filename)
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return parsed


@pytest.mark.parametrize("use_cache", [False, True])
def test_each_shipped_file_is_parsed_once_for_every_rule(rule_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                          use_cache: bool) -> None:
    shipped = {"qwen3_6_scripts/uses.py": CACHE_MANAGER, "qwen3_6_scripts/plain.py": "z = 3\n"}
    tree = MemoryTree({**EXAMPLE_FILES, **shipped, EXAMPLE_SCRIPT: "set -e\ncp ./paged_attn.py /tmp/x.py\n"},
                      executable=[EXAMPLE_SCRIPT])
    plan = plan_shipping(tree)
    parsed = _parses(monkeypatch)
    first = check_tree(tree, plan, POLICY, targets=[EXAMPLE_TARGET], use_cache=use_cache)
    assert sorted(parsed) == sorted(first.checked)  # the tree rule read uses.py through the file rules' parse
    assert "qwen3_6_scripts/uses.py" in first.checked
    parsed.clear()
    again = check_tree(tree, plan, POLICY, targets=[EXAMPLE_TARGET], use_cache=use_cache)
    assert again == first
    assert parsed == ([] if use_cache else sorted(first.checked))  # warm: no parse at all
