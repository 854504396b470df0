"""The cases ``patcher test`` runs, judged on failing input: rule examples the rule gets wrong.

``patcher test`` and tests/test_checks.py judge a rule example with the
same ``judge_example``; these tests hold that judge to every part of an
example: no violation on VALID code, exactly its ``note``, an INVALID
finding at its ``path`` and line with its text.
"""

from __future__ import annotations

from patcher.authoring.cases import Case, Check, run_case
from patcher.checks import RULES
from patcher.checks.base import Invalid, Valid
from patcher.checks.examples import check_example, judge_example
from patcher.checks.install_fails_loudly import EXAMPLE_TARGET

DEAD_IMPORT = "if False:\n    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
NOTE = "cannot run: its test `False` is always false"
KERNEL_IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
OTHER = "qwen3_6_scripts/other.py"


def _rule_case(rule: str, example: Valid | Invalid) -> Case:
    check = Check.RULE_VALID if isinstance(example, Valid) else Check.RULE_INVALID
    return Case(f"rule {rule}", f"{check.value} 1", check, rule=rule, rule_example=example)


def test_a_valid_rule_example_the_rule_reports_fails_with_what_it_found() -> None:
    result = run_case(_rule_case("python-3.10", Valid("def f(:\n")))
    assert not result.passed
    assert result.message == "the rule reports code it must accept"
    lines = result.diff.splitlines()
    assert lines[:3] == ["--- expected", "+++ got", "@@ -1 +1 @@"]
    assert lines[3] == "-nothing reported"
    assert lines[4].startswith("+example.py:1: error: ")


def test_an_invalid_rule_example_found_at_another_line_fails() -> None:
    code = "x = 1\ndef f(:\n"
    assert run_case(_rule_case("python-3.10", Invalid(code, line=2, found=""))).passed
    result = run_case(_rule_case("python-3.10", Invalid(code, line=1, found="")))
    assert not result.passed
    assert result.message == "the rule does not report example.py line 1 with ''"
    assert "-example.py:1: error: ......" in result.diff.splitlines()
    assert any(line.startswith("+example.py:2: error: ") for line in result.diff.splitlines())


def test_a_valid_example_passes_only_with_the_note_the_rule_makes() -> None:
    rule = RULES["no-triton-kernels"]
    assert judge_example(rule, Valid(DEAD_IMPORT, note=NOTE)).passed
    # check_example leaves notes out: only the judge sees a wrong or missing note.
    assert check_example(rule, Valid(DEAD_IMPORT, note="is always true")) == []
    wrong = judge_example(rule, Valid(DEAD_IMPORT, note="is always true"))
    assert (wrong.passed, wrong.problem) == (False, "no note holds 'is always true'")
    assert wrong.got.startswith("example.py:2: note: imports context_attention_fwd") and wrong.got.endswith(NOTE)
    unexpected = judge_example(rule, Valid(DEAD_IMPORT))
    assert not unexpected.passed
    assert unexpected.problem == "the rule makes a note the example does not expect (give it a 'note')"


def test_an_invalid_example_passes_only_at_its_own_path() -> None:
    # The kernel import sits in the patched file; the example says the finding is in other.py.
    rule = RULES["no-triton-kernels"]
    misplaced = Invalid("y = 2\n", path=OTHER, files={EXAMPLE_TARGET: KERNEL_IMPORT}, line=1,
                        found="imports context_attention_fwd")
    found = check_example(rule, misplaced)
    assert [(v.path, v.line) for v in found] == [(EXAMPLE_TARGET, 1)]  # same line, same text: only the path is wrong
    verdict = judge_example(rule, misplaced)
    assert not verdict.passed
    assert verdict.problem == f"the rule does not report {OTHER} line 1 with 'imports context_attention_fwd'"
    assert verdict.expected == f"{OTHER}:1: error: ...imports context_attention_fwd..."
    assert verdict.got.startswith(f"{EXAMPLE_TARGET}:1: error: imports context_attention_fwd")
    placed = Invalid(KERNEL_IMPORT, files={OTHER: "y = 2\n"}, line=1, found="imports context_attention_fwd")
    assert judge_example(rule, placed).passed


def test_an_invalid_example_whose_rule_finds_nothing_or_other_text_fails() -> None:
    rule = RULES["no-triton-kernels"]
    nothing = judge_example(rule, Invalid("x = 1\n", line=1, found="imports"))
    assert (nothing.passed, nothing.problem, nothing.got) == (False, "the rule found nothing", "nothing reported")
    other = judge_example(rule, Invalid(KERNEL_IMPORT, line=1, found="calls context_attention_fwd"))
    assert not other.passed and "with 'calls context_attention_fwd'" in other.problem
