"""``--allow RULE --reason "..."``: each rule overridden for one run pairs with its own reason, and the run says so.

``apply`` records the override in the manifest; the next run is not
covered by it, but ``check`` of apply's output honours what was recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patcher.checks import Severity, load_policy, parse_allowed
from patcher.checks.base import Settings
from patcher.checks.policy import Policy
from patcher.errors import PatcherError

from tests.fixtures_rules import POLICY_FILE, reenable_triton
from tests.fixtures_vendor import SHIPPED


def test_allow_pairs_rules_with_reasons_in_order() -> None:
    policy = load_policy(POLICY_FILE)
    pairs = parse_allowed(["v1-length-limit", "python-3.10"], ["long  contexts\ntested", "b"], policy)
    assert pairs == (("v1-length-limit", "long contexts tested"), ("python-3.10", "b"))
    with pytest.raises(PatcherError, match="1 --allow but 0 --reason"):
        parse_allowed(["python-3.10"], [], policy)
    with pytest.raises(PatcherError, match="did you mean 'python-3.10'"):
        parse_allowed(["python3.10"], ["x"], policy)
    with pytest.raises(PatcherError, match="the --reason is empty"):
        parse_allowed(["python-3.10"], ["  "], policy)


def test_allow_errors_say_what_to_do() -> None:
    policy = load_policy(POLICY_FILE)
    with pytest.raises(PatcherError) as counts:
        parse_allowed(["python-3.10", "v1-length-limit"], ["tested"], policy)
    assert str(counts.value) == ('2 --allow but 1 --reason (give each --allow RULE its own --reason '
                                 '"why this run may break it")')
    with pytest.raises(PatcherError) as unknown:
        parse_allowed(["gpu-melts"], ["x"], policy)
    assert str(unknown.value) == ("--allow gpu-melts: no such rule (rules: no-triton-kernels, keep-pytorch-fallbacks, "
                                  "v2-needs-fallback, v1-length-limit, python-3.10, install-fails-loudly)")
    with pytest.raises(PatcherError) as empty:
        parse_allowed(["no-triton-prefill"], ["\t\n"], policy)
    assert str(empty.value) == "--allow no-triton-kernels: the --reason is empty (say why this run may break the rule)"


def test_allow_suggests_only_the_rules_of_the_policy_in_use() -> None:
    settings = Settings("no-triton-kernels", Severity.ERROR, "hangs the card")
    only_triton = Policy(Path("<one rule>"), {"no-triton-kernels": settings})
    with pytest.raises(PatcherError) as raised:
        parse_allowed(["python-3.1"], ["x"], only_triton)
    assert str(raised.value) == "--allow python-3.1: no such rule (rules: no-triton-kernels)"
    with pytest.raises(PatcherError, match="no such rule; did you mean 'no-triton-prefill'"):
        parse_allowed(["no-triton-prefil"], ["x"], only_triton)


def test_allow_overrides_a_rule_for_one_run_and_the_manifest_records_it(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    reenable_triton(vendor_copy)
    source = make_zip(vendor_copy)
    reason = "lab card, Triton build under test (ticket 42)"
    # The rule's former id still works, and names the rule by its current id.
    result = cli("apply", source, "-o", "ctx", "--allow", "no-triton-prefill", "--reason", reason)
    assert result.exit_code == 0, result.stderr
    assert any(line.startswith(f"allowed: {SHIPPED}:") and "no-triton-kernels" in line and reason in line
               for line in result.stderr.splitlines()), result.stderr
    assert f"override --allow no-triton-kernels: {reason} (recorded in the manifest)" in result.stderr
    manifest = json.loads((cli.cwd / "ctx" / "patcher-manifest.json").read_text())
    assert manifest["allowed_rules"] == [{"rule": "no-triton-kernels", "reason": reason}]
    # The next run is not covered by this one's override...
    again = cli("apply", source, "-o", "ctx2")
    assert again.exit_code == 2 and not (cli.cwd / "ctx2").exists()
    # ...but check honours what apply recorded, and says so.
    checked = cli("check", cli.cwd / "ctx")
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert any(line.startswith("allowed: ") and "recorded in patcher-manifest.json" in line
               for line in checked.stdout.splitlines()), checked.stdout
