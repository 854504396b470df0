"""A rules entry cannot skip a rule: a blank, forged, damaged or odd entry is a miss, the rules run and overwrite it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patcher.checks import cache as rule_cache
from patcher.checks import load_policy, run_rules, runner
from patcher.checks.base import PythonSource
from patcher.checks.cache import MAX_ENTRY, RuleCache
from tests.fixtures_hostile_cache import deep_json, forge, never_blocks, not_a_file, payload_of, private_config, sign
from tests.fixtures_vendor import PATCHES

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config

POLICY = load_policy(PATCHES / "policy.toml")
# The Triton prefill kernel, imported: an error of no-triton-kernels.
TRITON = (b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
          b"def f():\r\n    return context_attention_fwd\r\n")


def _found(data: bytes = TRITON) -> list[tuple[str, str, str, int, str]]:
    result = run_rules([("qwen3_6_scripts/a.py", lambda: data)], POLICY)
    return [(v.rule, v.severity.value, v.path, v.line, v.message) for v in result.violations]


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the rules read themselves (a miss), in order."""
    parsed: list[str] = []
    real = runner._check_file

    def counting(source: PythonSource, rules: Any) -> Any:
        parsed.append(source.path)
        return real(source, rules)

    monkeypatch.setattr(runner, "_check_file", counting)
    return parsed


class Warm:
    """The rules cache holding the good entry for TRITON, as a run leaves it; a test then spoils it."""

    def __init__(self, folder: Path) -> None:
        self.expected = _found()
        assert self.expected[0][:2] == ("no-triton-kernels", "error")
        [self.entry] = (folder / "checks").iterdir()
        self.good = payload_of(self.entry)

    def check(self, judged: list[str]) -> None:
        """A run finds what an uncached run finds, and leaves the good entry, which the next run hits."""
        judged.clear()
        assert _found() == self.expected
        assert judged == ["qwen3_6_scripts/a.py"]  # the rules ran again
        assert payload_of(self.entry) == self.good  # and overwrote the entry
        assert _found() == self.expected and judged == ["qwen3_6_scripts/a.py"]  # a hit


@pytest.fixture
def warm(hermetic_cache: Path) -> Warm:
    return Warm(hermetic_cache)


def test_the_findings_match_an_uncached_run(warm: Warm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    assert _found() == warm.expected


def test_a_blank_entry_planted_without_the_key_is_a_miss(warm: Warm, judged: list[str]) -> None:
    # What would let a Triton kernel ship: "no findings" for exactly these bytes.
    forge(warm.entry.parent, warm.entry.name, json.dumps({"key": warm.entry.name, "found": []}).encode())
    warm.check(judged)


def test_a_blank_entry_for_a_file_never_judged_is_a_miss(hermetic_cache: Path, judged: list[str]) -> None:
    # The attacker computes the entry's name (all of it is public) before any run has judged the file.
    key = RuleCache(hermetic_cache / "checks", [s for _, s in runner._file_rules(POLICY)]).key(TRITON)
    forge(hermetic_cache / "checks", key, json.dumps({"key": key, "found": []}).encode())
    assert [f[:2] for f in _found()][0] == ("no-triton-kernels", "error")
    assert judged == ["qwen3_6_scripts/a.py"]
    assert [p.name for p in (hermetic_cache / "checks").iterdir()] == [key]  # the name the attacker chose


DAMAGE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "severity-unknown": lambda m: m["found"][0].__setitem__(1, "fatal"),
    "severity-a-number": lambda m: m["found"][0].__setitem__(1, 2),
    "line-a-string": lambda m: m["found"][0].__setitem__(2, "3"),
    "line-a-bool": lambda m: m["found"][0].__setitem__(2, True),
    "line-a-float": lambda m: m["found"][0].__setitem__(2, 3.0),
    "line-negative": lambda m: m["found"][0].__setitem__(2, -1),
    "rule-a-number": lambda m: m["found"][0].__setitem__(0, 1),
    "message-null": lambda m: m["found"][0].__setitem__(3, None),
    "finding-three-items": lambda m: m["found"][0].pop(),
    "finding-an-object": lambda m: m["found"].__setitem__(0, {"rule": "no-triton-kernels"}),
    "found-an-object": lambda m: m.update(found={}),
    "key-of-another-file": lambda m: m.update(key="0" * 64),
    "an-extra-field": lambda m: m.update(allowed=True),
    "no-key": lambda m: m.pop("key"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_an_entry_of_the_wrong_shape_is_a_miss_that_is_overwritten(warm: Warm, judged: list[str], damage: str) -> None:
    meta = json.loads(warm.good)
    DAMAGE[damage](meta)
    sign(warm.entry.parent, warm.entry.name, json.dumps(meta).encode())
    warm.check(judged)


RAW: dict[str, bytes] = {
    "deep-json": deep_json(),
    "deep-json-inside": b'{"key": "K", "found": ' + deep_json() + b"}",
    "bad-utf8": b'{"key": "\xff\xfe", "found": []}',
    "a-json-list": b"[]",
    "empty": b"",
    "json-then-more": b'{"key": "K", "found": []} {"found": []}',
}


@pytest.mark.parametrize("damage", sorted(RAW))
def test_an_entry_that_does_not_decode_is_a_miss_that_is_overwritten(warm: Warm, judged: list[str],
                                                                     damage: str) -> None:
    sign(warm.entry.parent, warm.entry.name, RAW[damage].replace(b'"K"', json.dumps(warm.entry.name).encode()))
    warm.check(judged)


def test_running_out_of_memory_while_decoding_is_a_miss(warm: Warm, judged: list[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(rule_cache.json, "loads", exhausted)
    judged.clear()
    assert _found() == warm.expected and judged == ["qwen3_6_scripts/a.py"]


NOT_A_FILE = not_a_file(MAX_ENTRY)


@pytest.mark.parametrize("kind", sorted(NOT_A_FILE))
def test_an_entry_that_is_not_a_small_regular_file_is_a_miss_that_is_overwritten(warm: Warm, judged: list[str],
                                                                                  kind: str) -> None:
    made = NOT_A_FILE[kind](warm.entry)
    try:
        with never_blocks(warm.entry) as stuck:
            warm.check(judged)
        assert not stuck
    finally:
        if callable(made):
            made()
