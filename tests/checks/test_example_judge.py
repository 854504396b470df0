"""The judge of rule examples, on rules that get their examples wrong in every way the judge tells apart.

Each failing verdict is checked whole (passed, problem, expected, got), as
``patcher test`` prints all of it; ``Scripted`` stands for a buggy rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from patcher.checks import RULES
from patcher.checks.base import FileRule, Invalid, PythonSource, Settings, Severity, Valid, Violation
from patcher.checks.examples import NOTHING, Verdict, judge_example

KERNEL_IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
TWO_IMPORTS = ("from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
               "x = 1\n"
               "from vllm.attention.ops.triton_decode_attention import decode_attention_fwd\n")


class Scripted(FileRule):
    """A file rule that reports what the test tells it to, on every file: the judge's view of a buggy rule."""

    ID = "scripted"
    DESCRIPTION = "reports what it is told to"

    def __init__(self, *found: tuple[str, Severity, int, str]) -> None:
        self.found = found

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield the scripted findings at ``source``'s path."""
        for rule, severity, line, message in self.found:
            yield Violation(rule, severity, source.path, line, message)


def test_judging_an_example_never_touches_the_rule_cache(hermetic_cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # An example's findings must come from the rule as it is now, never from a cache of an older one.
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    rule = RULES["no-triton-kernels"]
    example = Invalid(KERNEL_IMPORT, 1, "imports context_attention_fwd", files={"qwen3_6_scripts/x.py": "y = 1\n"})
    assert judge_example(rule, example).passed
    assert not (hermetic_cache / "checks").exists()


def test_valid_code_the_rule_reports_fails_with_everything_it_found() -> None:
    verdict = judge_example(RULES["no-triton-kernels"], Valid(TWO_IMPORTS))
    got = verdict.got.split("\n")
    assert (verdict.passed, verdict.problem, verdict.expected) == (
        False, "the rule reports code it must accept", NOTHING)
    assert [line.split(": ")[:2] for line in got] == [["example.py:1", "error"], ["example.py:3", "error"]]
    assert "imports context_attention_fwd" in got[0] and "imports decode_attention_fwd" in got[1]


def test_a_note_the_valid_example_does_not_expect_fails() -> None:
    rule = Scripted(("scripted", Severity.NOTE, 2, "cannot run: its test `False` is always false"))
    verdict = judge_example(rule, Valid("if False:\n    launch()\n"))
    assert verdict == Verdict(False, "the rule makes a note the example does not expect (give it a 'note')",
                              NOTHING, "example.py:2: note: cannot run: its test `False` is always false")
    assert judge_example(rule, Valid("if False:\n    launch()\n", note="always false")) == Verdict(True)


def test_a_valid_example_whose_note_is_not_made_fails() -> None:
    rule = Scripted(("scripted", Severity.NOTE, 2, "cannot run: its test `0` is always false"))
    verdict = judge_example(rule, Valid("if 0:\n    launch()\n", note="is always true"))
    assert verdict == Verdict(False, "no note holds 'is always true'", "...: note: ...is always true...",
                              "example.py:2: note: cannot run: its test `0` is always false")
    silent = judge_example(Scripted(), Valid("launch()\n", note="is always true"))
    assert silent == Verdict(False, "no note holds 'is always true'", "...: note: ...is always true...", NOTHING)


def test_an_invalid_example_the_rule_misses_fails() -> None:
    verdict = judge_example(RULES["no-triton-kernels"], Invalid("x = 1\n", 1, "imports"))
    assert verdict == Verdict(False, "the rule found nothing", "example.py:1: error: ...imports...", NOTHING)


@pytest.mark.parametrize("found", [
    ("scripted", Severity.WARNING, 1, "launches a kernel"),  # this rule, but not an error
    ("python-3.10", Severity.ERROR, 1, "launches a kernel"),  # an error, of another rule
])
def test_an_invalid_examples_findings_must_all_be_errors_of_the_rule(found: tuple[str, Severity, int, str]) -> None:
    rule = Scripted(("scripted", Severity.ERROR, 1, "launches a kernel"), found)
    verdict = judge_example(rule, Invalid("launch()\n", 1, "launches"))
    assert verdict == Verdict(False, "the example's findings must all be errors of scripted",
                              "example.py:1: error: ...launches...",
                              "example.py:1: error: launches a kernel\n"
                              f"example.py:1: {found[1].value}: launches a kernel")


@pytest.mark.parametrize("line, found", [(1, "imports decode_attention_fwd"), (2, "imports context_attention_fwd")])
def test_an_invalid_example_needs_its_text_on_its_own_line(line: int, found: str) -> None:
    # The rule reports context_attention_fwd on line 1 and decode_attention_fwd on line 3.
    rule = RULES["no-triton-kernels"]
    verdict = judge_example(rule, Invalid(TWO_IMPORTS, line, found))
    assert (verdict.passed, verdict.problem, verdict.expected) == (
        False, f"the rule does not report example.py line {line} with {found!r}", f"example.py:{line}: error: ...{found}...")
    assert [entry.split(": ")[0] for entry in verdict.got.split("\n")] == ["example.py:1", "example.py:3"]
    assert judge_example(rule, Invalid(TWO_IMPORTS, 3, "imports decode_attention_fwd")) == Verdict(True)
