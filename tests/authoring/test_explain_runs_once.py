"""``explain PATCH --in VENDOR`` runs the series once: each earlier patch of the target runs one time.

What the explained patch receives (the file after the patches before it) and its verdict (as
apply gives it, closest code at the shipped file's lines) come from that one run.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.fixtures_vendor import SHIPPED, VENDOR_TREE, VENDOR_ZIP


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count every run of a patch, by patch id, wherever the runner is called from."""
    from patcher.patchset import runner

    counted: Counter[str] = Counter()
    real = runner.run_patch

    def counting(patch: Any, *args: Any, **kwargs: Any) -> Any:
        counted[patch.id] += 1
        return real(patch, *args, **kwargs)

    monkeypatch.setattr(runner, "run_patch", counting)
    return counted


def test_explaining_the_last_patch_runs_each_patch_of_the_series_once(cli, runs) -> None:  # type: ignore[no-untyped-def]
    result = cli("explain", "prefix-buffer-reuse", "--in", VENDOR_ZIP, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert runs == {"three-tier-decode": 1, "prefix-pregather": 1, "prefix-buffer-reuse": 1}
    found = json.loads(result.stdout)["in"]
    assert (found["shipped"], found["status"]) == (SHIPPED, "applies")
    assert found["earlier"] == ["three-tier-decode", "prefix-pregather"]
    # Matched in the file as prefix-pregather left it, each match is shown at the shipped file's own line.
    shipped = (VENDOR_TREE / SHIPPED).read_text().splitlines()
    temporaries = [m for m in found["matches"] if m["what"].endswith(" = ...")]
    assert len(temporaries) == 6 and found["unmatched"] == []
    for match in temporaries:
        first, last = match["lines"]
        assert first == last and shipped[first - 1].split("=")[0].strip() == match["what"].split(" = ")[0]


def test_explaining_the_first_patch_runs_it_alone_once(cli, runs) -> None:  # type: ignore[no-untyped-def]
    result = cli("explain", "three-tier-decode", "--in", VENDOR_ZIP)
    assert result.exit_code == 0, result.stderr
    assert runs == {"three-tier-decode": 1}
    assert "  this patch: applies" in result.stdout.splitlines()
