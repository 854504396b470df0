"""Why the cache was off is said once, after the command's own output, and only by the command it happened in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from patcher.cache_store import Store
from tests.fixtures_hostile_cache import private_config
from tests.fixtures_vendor import VENDOR_ZIP

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config


def test_a_refused_cache_is_said_once_after_the_report(cli: Any, hermetic_cache: Path) -> None:
    uncached = cli("check", VENDOR_ZIP)
    for area in ("patched", "checks"):
        (hermetic_cache / area).mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(hermetic_cache / "checks", 0o770)
    result = cli("check", VENDOR_ZIP)
    warning = (f"warning: {hermetic_cache / 'checks'}: the cache folder can be written by group or others "
               f"(mode 0770); the cache is off for this run (chmod -R go-w {hermetic_cache / 'checks'})\n")
    assert (result.exit_code, result.stdout, result.stderr) == (uncached.exit_code, uncached.stdout,
                                                                uncached.stderr + warning)


def test_a_warning_noted_before_a_command_is_not_printed_by_it(cli: Any, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "patched"
    elsewhere.mkdir(parents=True, mode=0o700)
    os.chmod(elsewhere, 0o777)
    assert Store(elsewhere, 100).read("a" * 64) is None  # a library caller's refusal, never taken
    result = cli("check", VENDOR_ZIP)
    assert "the cache is off" not in result.stderr and result.exit_code == 0
