"""A rule's VALID and INVALID examples are judged whole: a VALID one with nothing reported but its ``note``, an INVALID one at its path, line and text.

``patcher test`` and tests/checks judge a rule example with the same
``judge_example``; these tests hold that judge, and what ``patcher test``
prints of it, to every part of an example, on examples the rule gets wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


def test_a_rule_example_with_a_wrong_note_or_path_fails_in_patcher_test(
        cli: Any, team: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two examples a hurried rule author might write: the note of another rule's message, and
    # the finding placed in the file the code sits in rather than the one the rule reports.
    rule = type(RULES["no-triton-kernels"])
    dead = "if False:\n    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
    kernel = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
    monkeypatch.setattr(rule, "VALID", (*rule.VALID, Valid(dead, note="`use_v1` is always True")))
    monkeypatch.setattr(rule, "INVALID", (*rule.INVALID, Invalid(
        "y = 2\n", path="qwen3_6_scripts/other.py", files={"qwen3_6_scripts/paged_attn.py": kernel},
        line=1, found="imports context_attention_fwd")))
    result = cli("test", "--patches", team)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert failures == [
        f"FAIL  rule no-triton-kernels: VALID {len(rule.VALID)}: no note holds '`use_v1` is always True'",
        f"FAIL  rule no-triton-kernels: INVALID {len(rule.INVALID)}: the rule does not report "
        "qwen3_6_scripts/other.py line 1 with 'imports context_attention_fwd'",
    ]
    note = lines.index(failures[0])
    assert lines[note + 1:note + 3] == ["    --- expected", "    +++ got"]
    assert "    -...: note: ...`use_v1` is always True..." in lines[note:note + 8]
    assert any(line.startswith("    +example.py:2: note: imports context_attention_fwd") and
               line.endswith("cannot run: its test `False` is always false") for line in lines[note:note + 8])
    path = lines.index(failures[1])
    assert "    -qwen3_6_scripts/other.py:1: error: ...imports context_attention_fwd..." in lines[path:path + 8]
    assert ("    +qwen3_6_scripts/paged_attn.py:1: error: imports context_attention_fwd from "
            "vllm.attention.ops.prefix_prefill") in lines[path:path + 8]
    assert lines[-1].endswith(" passed, 2 failed")
