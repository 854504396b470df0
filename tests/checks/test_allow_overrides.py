"""``--allow RULE --reason "..."``: each rule overridden for one run pairs with its own reason, or the run is refused.

What ``apply`` and ``check`` then say and record is walked through in
tests/end_to_end/test_allow_override.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import Severity, load_policy, parse_allowed
from patcher.checks.base import Settings
from patcher.checks.policy import Policy
from patcher.errors import PatcherError

from tests.fixtures_rules import POLICY_FILE


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
