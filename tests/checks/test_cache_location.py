"""Where the rule cache lives: ``checks/`` under the patch cache (``PATCHER_CACHE_DIR``, else XDG's), off with ``PATCHER_NO_CACHE``."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import run_rules
from patcher.checks.cache import cache_dir

from tests.fixtures_rules import POLICY, readers

CODE = (b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
        b"def f():\r\n    use_v1 = True\r\n    if not use_v1:\r\n        ops.paged_attention_v2(o)\r\n")


def _check(data: bytes) -> None:
    """Run the rules on ``data`` as a.py, through the cache wherever the environment puts it."""
    found = run_rules(readers({"a.py": data}), POLICY).violations
    assert [v.rule for v in found] == ["no-triton-kernels", "v2-needs-fallback"]


def test_the_folder_is_checks_under_the_patch_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache" / "checks"
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    assert cache_dir() is None


def test_it_lives_under_the_patch_cache_where_xdg_puts_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.delenv("PATCHER_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _check(CODE)
    assert len(list((tmp_path / "xdg" / "patcher" / "checks").iterdir())) == 1


def test_no_cache_turns_it_off(rule_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCHER_NO_CACHE", "1")
    _check(CODE)
    assert not rule_cache.exists()
