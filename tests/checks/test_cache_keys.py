"""What a rule cache key is made of: the file's bytes and every setting of the rules that can change what they find."""

from __future__ import annotations

from pathlib import Path

from patcher.checks.base import Settings, Severity
from patcher.checks.cache import RuleCache, rules_key

from tests.fixtures_rules import POLICY

SETTINGS = list(POLICY.rules.values())


def test_a_key_depends_on_the_bytes_and_on_every_setting_of_the_rules() -> None:
    same = RuleCache(Path("unused"), SETTINGS)
    assert same.key(b"x = 1\n") == RuleCache(Path("unused"), list(SETTINGS)).key(b"x = 1\n")
    assert same.key(b"x = 1\n") != same.key(b"x = 1\r\n")
    base = Settings("v1-length-limit", Severity.WARNING, "the V1 kernel fails past 32K", {"max-tokens": 32768})
    variants = [
        [base],
        [Settings("v1-length-limit", Severity.ERROR, base.reason, base.params)],
        [Settings("v1-length-limit", Severity.WARNING, base.reason, {"max-tokens": 65536})],
        [Settings("v1-length-limit", Severity.WARNING, base.reason, {"max-tokens": "32768"})],
        [Settings("python-3.10", Severity.WARNING, base.reason, base.params)],
        [base, Settings("python-3.10", Severity.ERROR, "the image runs 3.10")],
    ]
    assert len({rules_key(v) for v in variants}) == len(variants)
    # The reason is not part of it: it never changes what a rule finds.
    assert rules_key([Settings("v1-length-limit", Severity.WARNING, "reworded", base.params)]) == rules_key([base])
