"""The file rules' results are cached by content: a hit gives the same findings, anything else is a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import load_policy, run_rules
from patcher.checks import runner
from patcher.checks.base import PythonSource

from tests.fixtures_vendor import PATCHES

POLICY = PATCHES / "policy.toml"
CODE = (b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
        b"def f():\r\n    use_v1 = True\r\n    if not use_v1:\r\n        ops.paged_attention_v2(o)\r\n")


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "checks"


def _found(path: str = "a.py", data: bytes = CODE, policy_file: Path = POLICY) -> list[tuple[str, str, str, int, str]]:
    result = run_rules([(path, lambda: data)], load_policy(policy_file))
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
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _found("a.py")
    assert [f[:2] for f in first] == [("no-triton-kernels", "error"), ("v2-needs-fallback", "note")]
    assert len(list(cache.iterdir())) == 1
    parsed = _parses(monkeypatch)
    second = _found("b/c.py")
    assert parsed == []
    assert second == [(rule, severity, "b/c.py", line, message) for rule, severity, _, line, message in first]


def test_other_bytes_or_another_policy_miss(cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _found()
    parsed = _parses(monkeypatch)
    _found(data=CODE + b"# changed\r\n")
    weaker = tmp_path / "policy.toml"
    weaker.write_text(POLICY.read_text().replace('id = "no-triton-kernels"\nseverity = "error"',
                                                 'id = "no-triton-kernels"\nseverity = "warning"'))
    assert [f[1] for f in _found(policy_file=weaker)][0] == "warning"
    assert parsed == ["a.py", "a.py"]


def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _found()
    (entry,) = cache.iterdir()
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


def test_a_file_that_does_not_parse_is_not_cached(cache: Path) -> None:
    assert [f[0] for f in _found(data=b"def f(:\n")] == ["python-3.10"]
    assert not cache.exists() or not list(cache.iterdir())


def test_no_cache_turns_it_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    _found()
    assert not cache.exists()


def test_it_lives_under_the_patch_cache_where_xdg_puts_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.delenv("PATCHER_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _found()
    assert len(list((tmp_path / "xdg" / "patcher" / "checks").iterdir())) == 1
