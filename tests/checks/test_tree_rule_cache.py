"""What a tree rule found is cached by what it read: used again only while every input and every file it read is unchanged.

A tree rule reads the ship plan, the patch set's targets, which shipped
files mention its words, and the files it chooses to read. The entry's key
covers the first three; the entry records the sha256 of each file read,
and is a hit only while each still has those bytes. The builds here are a
kernel defined in one shipped module and imported by another (what
no-triton-kernels' tree part finds), and an install script without
``set -e`` (what install-fails-loudly finds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from patcher.checks import check_tree
from patcher.checks.cache import TreeRuleCache, value_digest
from patcher.checks.examples import MemoryTree
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.checks.rules import RULES
from patcher.shipping import plan_shipping

from tests.fixtures_rules import POLICY, SCRIPT
from tests.fixtures_vendor import ROOT, VENDOR_ZIP

INSTALL = "cp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/paged_attn.py\n"
KERNELS = "qwen3_6_scripts/kernels.py"
IMPORTER = "qwen3_6_scripts/other.py"
DEFINES = "import triton\n\n@triton.jit\ndef _k(x):\n    pass\n\ndef run_decode(x):\n    _k[(1,)](x)\n"
NO_KERNEL = "import triton\nblocks = triton.cdiv(4096, 64)\n\ndef run_decode(x):\n    return x\n"
IMPORTS = "from .kernels import run_decode\n"
TREE_RULES = ("no-triton-kernels", "install-fails-loudly")


def build(changes: dict[str, str] | None = None) -> MemoryTree:
    """The example build context (its install script without ``set -e``, a kernel and its importer), CHANGES applied."""
    files = {**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL, KERNELS: DEFINES, IMPORTER: IMPORTS, **(changes or {})}
    return MemoryTree(files, executable=[EXAMPLE_SCRIPT])


def judge(tree: MemoryTree, targets: tuple[str, ...] = (EXAMPLE_TARGET,)) -> list[tuple[str, str, int, str]]:
    result = check_tree(tree, plan_shipping(tree), POLICY, targets=list(targets))
    return [(v.rule, v.path, v.line, v.message) for v in result.violations if v.rule in TREE_RULES]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each time a tree rule really runs (not answered by the cache)."""
    ran: list[str] = []
    for rule_id in TREE_RULES:
        kind = type(RULES[rule_id])
        real = kind.check_tree

        def counting(self: Any, build: Any, settings: Any, real: Any = real, rule_id: str = rule_id) -> Iterator[Any]:
            ran.append(rule_id)
            return real(self, build, settings)

        monkeypatch.setattr(kind, "check_tree", counting)
    return ran


def _imports_kernel(found: list[tuple[str, str, int, str]]) -> bool:
    return any(path == IMPORTER and "defines the Triton kernel _k" in message for _, path, _, message in found)


def test_the_same_build_is_judged_once(rule_cache: Path, runs: list[str]) -> None:
    first = judge(build())
    assert _imports_kernel(first) and any(rule == "install-fails-loudly" for rule, *_ in first)
    assert sorted(runs) == sorted(TREE_RULES)
    assert judge(build()) == first
    assert sorted(runs) == sorted(TREE_RULES)  # the second build: both answered by the cache


def test_without_the_cache_every_run_judges(rule_cache: Path, runs: list[str]) -> None:
    tree = build()
    for _ in range(2):
        check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    assert len(runs) == 4 and not rule_cache.exists()


def test_an_entry_is_used_only_for_the_bytes_its_rule_read(rule_cache: Path, runs: list[str]) -> None:
    # kernels.py still mentions triton, so the key is the same; its bytes differ: the rule runs again.
    assert _imports_kernel(judge(build()))
    assert not _imports_kernel(judge(build({KERNELS: NO_KERNEL})))
    assert runs.count("no-triton-kernels") == 2
    # With no kernel defined the rule reads only the files that mention triton: another may change.
    assert not _imports_kernel(judge(build({KERNELS: NO_KERNEL, IMPORTER: IMPORTS + "# edited\n"})))
    assert runs.count("no-triton-kernels") == 2


def stale_entry(folder: Path, tree: MemoryTree, rule_id: str, read: dict[str, str | None]) -> str:
    """Plant, under the key a build of TREE has for RULE_ID, an entry that found nothing in files with the READ digests.

    What a cache restored from an older drop holds: authentic, its key
    right, its files' bytes no longer those. Return the key.
    """
    keys = _tree_keys(folder, tree, rule_id)
    cache = TreeRuleCache(folder)
    for key in keys:
        cache.put(key, [], read)
    return keys[0]


def _tree_keys(folder: Path, tree: MemoryTree, rule_id: str) -> list[str]:
    """The names of the entries RULE_ID's run on TREE writes (found by running it into an empty copy of the folder)."""
    before = set(os.listdir(folder)) if folder.exists() else set()
    check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET])
    new = [name for name in os.listdir(folder) if name not in before]
    found = []
    for name in new:
        payload = json.loads((folder / name).read_bytes()[:-64])
        if "read" in payload and any(f[0] == rule_id for f in payload["found"]):
            found.append(name)
    return found


def test_a_stale_entry_is_a_miss(rule_cache: Path, runs: list[str]) -> None:
    tree = build()
    key = stale_entry(rule_cache, tree, "no-triton-kernels", {KERNELS: "0" * 64, IMPORTER: None})
    assert key
    runs.clear()
    assert _imports_kernel(judge(tree))  # found again, not the planted nothing
    assert runs.count("no-triton-kernels") == 1


@pytest.mark.parametrize("change", ["plan", "targets", "words"])
def test_a_change_to_an_input_the_key_covers_misses(rule_cache: Path, runs: list[str], change: str) -> None:
    if change == "plan":  # the install script stops on errors now: the plan says so, no file is read for it
        before, after = build(), build({EXAMPLE_SCRIPT: "set -e\n" + INSTALL})
        assert any(rule == "install-fails-loudly" for rule, *_ in judge(before))
        assert not any(rule == "install-fails-loudly" for rule, *_ in judge(after))
    elif change == "targets":  # no patch targets the copied file any more
        tree = build()
        assert any(rule == "install-fails-loudly" for rule, *_ in judge(tree))
        assert not any(rule == "install-fails-loudly" for rule, *_ in judge(tree, targets=()))
    else:  # no file mentioned triton, so the rule read none; now one defines a kernel
        before = build({KERNELS: "def run_decode(x):\n    return x\n"})
        assert not _imports_kernel(judge(before))
        assert _imports_kernel(judge(build()))
    assert len(runs) == 4  # both rules ran on both builds


# Payloads with a valid tag that are no tree entry: each must be a miss, never an error.
HOSTILE = {
    "not an object": b"[]",
    "extra key": b'{"key": "%s", "found": [], "read": [], "more": 1}',
    "another key": b'{"key": "%s0", "found": [], "read": []}',
    "a file rule entry": b'{"key": "%s", "found": []}',
    "finding without path": b'{"key": "%s", "found": [["no-triton-kernels", "error", 3, "x"]], "read": []}',
    "negative line": b'{"key": "%s", "found": [["no-triton-kernels", "error", "a.py", -1, "x"]], "read": []}',
    "unknown severity": b'{"key": "%s", "found": [["no-triton-kernels", "fatal", "a.py", 1, "x"]], "read": []}',
    "digest not hex": b'{"key": "%s", "found": [], "read": [["qwen3_6_scripts/kernels.py", "zz"]]}',
    "read not a list": b'{"key": "%s", "found": [], "read": {"qwen3_6_scripts/kernels.py": null}}',
    "path not text": b'{"key": "%s", "found": [], "read": [[1, null]]}',
    "deep": b'{"key": "%s", "found": [], "read": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not UTF-8": b'{"key": "%s", "found": [], "read": ["\xff"]}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_an_entry_of_the_wrong_shape_is_a_miss(rule_cache: Path, runs: list[str], name: str) -> None:
    tree = build()
    keys = _tree_keys(rule_cache, tree, "no-triton-kernels")
    cache = TreeRuleCache(rule_cache)
    for key in keys:
        payload = HOSTILE[name].replace(b"%s", key.encode())
        assert cache._store.write(key, payload)
    runs.clear()
    assert _imports_kernel(judge(tree))
    assert runs.count("no-triton-kernels") == 1


@dataclass(frozen=True)
class Shape:
    names: frozenset[str]
    hidden: int = field(default=0, repr=False)


def test_a_value_digest_sees_what_a_value_holds() -> None:
    a, b = Shape(frozenset(["alpha", "beta", "gamma"])), Shape(frozenset(["gamma", "alpha", "beta"]))
    assert value_digest(a) == value_digest(b)  # sets in any order
    assert value_digest(Shape(a.names, hidden=1)) != value_digest(a)  # a field repr leaves out still counts
    assert value_digest({"x": 1, "y": 2}) == value_digest({"y": 2, "x": 1})
    assert value_digest([1, 2]) != value_digest([2, 1]) and value_digest(1) != value_digest("1")


def test_the_plan_digests_alike_in_every_process() -> None:
    # Another process hashes strings with another seed: a warm run must still find the entry.
    probe = ("from pathlib import Path; from patcher.archive import open_source; from patcher.shipping import "
             "plan_shipping; from patcher.checks.cache import value_digest\n"
             f"with open_source(Path({str(VENDOR_ZIP)!r})) as tree: print(value_digest(plan_shipping(tree)))")
    digests = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}).stdout
               for seed in (1, 2, 3)}
    assert len(digests) == 1 and len(digests.pop().strip()) == 64


def test_the_vendors_install_script_is_judged_from_the_cache(rule_cache: Path, runs: list[str]) -> None:
    # The committed fixture: its patch_ops.sh copies the target without `set -e`.
    from patcher.archive import open_source

    with open_source(VENDOR_ZIP) as tree:
        plan = plan_shipping(tree)
        target = plan.shipped_copy("vllm/attention/ops/paged_attn.py")
        results = [check_tree(tree, plan, POLICY, targets=[target]).violations for _ in range(2)]
    assert results[0] == results[1] and any(v.rule == "install-fails-loudly" and v.path == SCRIPT
                                            for v in results[0])
    assert sorted(runs) == sorted(TREE_RULES)


@dataclass(frozen=True)
class Loop:
    name: str
    back: list[Any] = field(default_factory=list)


def test_a_plan_that_cannot_be_digested_is_judged_without_the_cache(rule_cache: Path, runs: list[str]) -> None:
    # A plan holding a cycle (or nested deeper than the digest goes) is no error: the rules run uncached.
    looped = Loop("x")
    looped.back.append(looped)
    with pytest.raises(RecursionError):
        value_digest(looped)
    tree = build()
    plan = plan_shipping(tree)
    object.__setattr__(plan, "copy_counts", {0: looped})  # this one plan value, frozen or not
    for _ in range(2):
        result = check_tree(tree, plan, POLICY, targets=[EXAMPLE_TARGET])
        assert any("defines the Triton kernel _k" in v.message and v.path == IMPORTER for v in result.violations)
    assert runs.count("no-triton-kernels") == 2
    assert not any("read" in json.loads((rule_cache / name).read_bytes()[:-64]) for name in os.listdir(rule_cache))
