"""The file rules' findings are cached by content: a hit gives the same findings without running the rules, anything else misses."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import check_tree, load_policy, run_rules
from patcher.checks import runner
from patcher.checks.base import PythonSource
from patcher.checks.examples import MemoryTree
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.shipping import plan_shipping

from tests.fixtures_rules import POLICY, POLICY_FILE, readers, write_policy

CODE = (b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
        b"def f():\r\n    use_v1 = True\r\n    if not use_v1:\r\n        ops.paged_attention_v2(o)\r\n")


def _found(path: str = "a.py", data: bytes = CODE, policy_file: Path = POLICY_FILE) -> list[tuple[str, str, str, int, str]]:
    result = run_rules(readers({path: data}), load_policy(policy_file))
    return [(v.rule, v.severity.value, v.path, v.line, v.message) for v in result.violations]


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = runner._check_file

    def counting(source: PythonSource, rules):  # type: ignore[no-untyped-def]
        parsed.append(source.path)
        return real(source, rules)

    monkeypatch.setattr(runner, "_check_file", counting)
    return parsed


def test_a_hit_gives_the_same_findings_at_the_new_path_without_reading_the_rules_again(
        rule_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _found("a.py")
    assert [f[:2] for f in first] == [("no-triton-kernels", "error"), ("v2-needs-fallback", "note")]
    assert len(list(rule_cache.iterdir())) == 1
    parsed = _parses(monkeypatch)
    second = _found("b/c.py")
    assert parsed == []
    assert second == [(rule, severity, "b/c.py", line, message) for rule, severity, _, line, message in first]


def test_other_bytes_or_another_policy_miss(rule_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _found()
    parsed = _parses(monkeypatch)
    _found(data=CODE + b"# changed\r\n")
    weaker = write_policy(tmp_path, 'id = "no-triton-kernels"\nseverity = "error"',
                          'id = "no-triton-kernels"\nseverity = "warning"')
    assert [f[1] for f in _found(policy_file=weaker)][0] == "warning"
    assert parsed == ["a.py", "a.py"]


def test_a_damaged_entry_is_a_miss_and_is_rewritten(rule_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _found()
    (entry,) = rule_cache.iterdir()
    entry.write_text('{"key": "other", "found": []}')
    parsed = _parses(monkeypatch)
    assert _found() == first
    assert parsed == ["a.py"]
    assert '"key": "other"' not in entry.read_text()


def test_an_unwritable_cache_only_costs_speed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(blocker))
    assert [f[0] for f in _found()] == ["no-triton-kernels", "v2-needs-fallback"]
    assert blocker.read_text() == "not a folder"  # what stands in the cache's way is left as it was


def test_a_file_that_does_not_parse_is_not_cached(rule_cache: Path) -> None:
    assert [f[0] for f in _found(data=b"def f(:\n")] == ["python-3.10"]
    assert not rule_cache.exists() or not list(rule_cache.iterdir())


INSTALL = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/paged_attn.py\n"


def test_check_tree_caches_what_the_file_rules_find_unless_told_not_to(rule_cache: Path) -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL}, executable=[EXAMPLE_SCRIPT])
    check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    assert not rule_cache.parent.exists()
    check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET])
    assert len(list(rule_cache.iterdir())) == 2  # paged_attn.py and other.py differ
