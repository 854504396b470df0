"""Every rule's own VALID and INVALID examples, judged as ``patcher test`` judges them.

The examples are the rules' documentation and the source of these tests:
each VALID one draws no violation (and exactly the note it names), each
INVALID one only errors of its rule, one at its line with its text. Every
rule has examples both ways, lives in the module named for its id, and its
examples are Python 3.10 code (so they never trip python-3.10 by accident).
"""

from __future__ import annotations

import posixpath
from typing import Any, Sequence

import pytest

from patcher.checks import RULES
from patcher.checks.base import FileRule, Invalid, TreeRule, Valid
from patcher.checks.examples import check_example, example_path, judge_example
from patcher.checks.install_fails_loudly import EXAMPLE_SCRIPT, EXAMPLE_TARGET


def _cases(kind: str, rules: Sequence[Any] = tuple(RULES.values())) -> list[Any]:
    cases = []
    for rule in rules:
        for number, example in enumerate(getattr(rule, kind), 1):
            cases.append(pytest.param(rule, example, id=f"{rule.ID}-{kind.lower()}-{number}"))
    return cases


def _verdict(rule: Any, example: Valid | Invalid) -> None:
    # The judge patcher test uses: a VALID example draws no violation and exactly its note (if any);
    # an INVALID one only errors of this rule, one at its path and line with its text.
    verdict = judge_example(rule, example)
    assert verdict.passed, f"{verdict.problem}\nexpected:\n{verdict.expected}\ngot:\n{verdict.got}"


@pytest.mark.parametrize("rule, example", _cases("VALID"))
def test_every_valid_example_passes(rule: Any, example: Valid) -> None:
    _verdict(rule, example)


@pytest.mark.parametrize("rule, example", _cases("INVALID"))
def test_every_invalid_example_is_found_at_its_line(rule: Any, example: Invalid) -> None:
    _verdict(rule, example)


_OTHER_FILE_RULES = [r for r in RULES.values() if isinstance(r, FileRule) and r.ID != "python-3.10"]


@pytest.mark.parametrize("rule, example", _cases("VALID", _OTHER_FILE_RULES) + _cases("INVALID", _OTHER_FILE_RULES))
def test_every_other_file_rules_examples_are_python_3_10(rule: Any, example: Valid | Invalid) -> None:
    # The examples of every other rule must not trip python-3.10 by accident.
    sources = {example_path(rule, example): example.code, **example.files}
    for path, code in sources.items():
        if path.endswith(".py"):
            assert check_example(RULES["python-3.10"], Valid(code)) == [], path


def test_every_rule_has_examples_both_ways_and_lives_in_its_own_file() -> None:
    for rule_id, rule in RULES.items():
        assert rule.VALID and rule.INVALID, rule_id
        module = type(rule).__module__.rsplit(".", 1)[1]
        assert module == rule_id.replace("-", "_").replace(".", "_"), (rule_id, module)
        assert isinstance(rule, (FileRule, TreeRule))


def test_the_example_install_script_sits_beside_the_example_target() -> None:
    assert posixpath.dirname(EXAMPLE_SCRIPT) == posixpath.dirname(EXAMPLE_TARGET)
