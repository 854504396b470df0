"""One patch on OLD and on NEW: its two statuses, NEW's failure, what its captures did, and rule findings matched across drops.

Built from outcome values: a capture is compared by the fingerprint
(sha256) of each binding and of the matched code, match by match and step
by step; a finding by rule, file and message, a moved shipped copy under
its new name.
"""

from __future__ import annotations

from patcher.patchset.outcome import FileOutcome, PatchOutcome, Status
from patcher.records import MatchPrint, Print, StepPrint
from patcher.review.upgrade import (NOT_SHIPPED, CaptureChange, RuleError, _capture_changes, _compare_patch,
                                    _differences, _ScopeDiffs)

from tests.fixtures_vendor import SHIPPED


def fp(text: str, sha: str | None = None) -> Print:
    return Print(sha or f"sha-of-{text}", text)


def match(code: str, **bindings: str) -> MatchPrint:
    return MatchPrint(fp(code), {name: fp(text) for name, text in bindings.items()})


def applied(patch, *steps: StepPrint) -> PatchOutcome:  # type: ignore[no-untyped-def]
    return PatchOutcome(patch, Status.APPLIED, prints=steps)


HEURISTIC = "max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512)"


def test_same_captures_are_no_change_whatever_the_text(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    old = applied(decode, StepPrint(2, (MatchPrint(fp("use_v1 = x", "h1"), {"HEURISTIC": fp("x", "h2")}),)))
    new = applied(decode, StepPrint(2, (MatchPrint(fp("use_v1 = (x)  # same", "h1"), {"HEURISTIC": fp("(x)", "h2")}),)))
    assert list(_capture_changes(old, new)) == []


def test_a_changed_binding_is_named_with_its_text_before_and_after(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    old = applied(decode, StepPrint(1, (match("T = 32768", OLD="32768"),)),
                  StepPrint(2, (match("use_v1 = h", HEURISTIC=HEURISTIC, V1_ARGS="a, b"),)))
    new = applied(decode, StepPrint(1, (match("T = 32768", OLD="32768"),)),
                  StepPrint(2, (match("use_v1 = h2", HEURISTIC="max_seq_len <= 4096", V1_ARGS="a, b"),)))
    # The binding explains the change: the matched code's own change is not repeated.
    assert list(_capture_changes(old, new)) == [CaptureChange(2, 1, "HEURISTIC", HEURISTIC, "max_seq_len <= 4096")]


def test_a_binding_only_one_side_has_is_a_change_with_the_other_side_empty(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    old = applied(decode, StepPrint(2, (match("c", B="b", A="a"),)))
    new = applied(decode, StepPrint(2, (match("c", C="c", B="b"),)))
    assert list(_capture_changes(old, new)) == [CaptureChange(2, 1, "A", "a", ""), CaptureChange(2, 1, "C", "", "c")]


def test_matched_code_that_changed_without_a_binding_is_shown_whole(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    old = applied(decode, StepPrint(1, (match("a = 1"), match("b = 2", X="x"))))
    new = applied(decode, StepPrint(1, (match("a = 1"), match("b = 3", X="x"))))
    assert list(_capture_changes(old, new)) == [CaptureChange(1, 2, "(matched code)", "b = 2", "b = 3")]


def test_a_step_that_matched_another_number_of_times_says_how_often(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    old = applied(decode, StepPrint(1, (match("a"), match("b"))), StepPrint(3, (match("z"),)))
    new = applied(decode, StepPrint(1, (match("c"),)), StepPrint(3, (match("y"),)))  # a count says it all
    assert list(_capture_changes(old, new)) == [CaptureChange(1, 0, "(matches)", "2", "1"),
                                                CaptureChange(3, 1, "(matched code)", "z", "y")]
    # A step NEW has no record of is not compared.
    assert list(_capture_changes(old, applied(decode, StepPrint(3, (match("z"),))))) == []


def test_statuses_failure_and_captures_of_one_patch(bundled) -> None:  # type: ignore[no-untyped-def]
    decode = bundled.patches[0]
    scopes = _ScopeDiffs()
    file = FileOutcome(SHIPPED, b"x = 1\n", b"x = 1\n", ())
    broken = FileOutcome(SHIPPED, b"def (\n", b"def (\n", (), parse_error="line 1: invalid syntax")
    old = applied(decode, StepPrint(2, (match("a", H="1"),)))
    new_applied = applied(decode, StepPrint(2, (match("a", H="2"),)))
    failed = PatchOutcome(decode, Status.FAILED, "step 2 (replace): no match")
    already = PatchOutcome(decode, Status.ALREADY_APPLIED, prints=(StepPrint(2, (match("b"),)),))

    both = _compare_patch(decode, file, old, file, new_applied, scopes)
    assert (both.old, both.new, both.diagnostic, both.old_diagnostic, both.failure) == ("applies", "applies", "", "", None)
    assert both.captures == (CaptureChange(2, 1, "H", "1", "2"),)
    assert [s.scope for s in both.scopes] == ["PagedAttention.forward_decode", "PagedAttention"]

    fails = _compare_patch(decode, file, already, file, failed, scopes)
    assert (fails.old, fails.new, fails.diagnostic, fails.old_diagnostic) == (
        "already-applied", "fails", "step 2 (replace): no match", "")
    assert fails.failure is failed and fails.captures == ()
    assert _compare_patch(decode, file, already, file, old, scopes).captures == ()  # only applied on both compares

    unparsed = _compare_patch(decode, file, failed, broken, None, scopes)
    assert (unparsed.old, unparsed.new) == ("fails", "fails")
    assert unparsed.diagnostic == f"{SHIPPED} does not parse: line 1: invalid syntax"
    assert unparsed.old_diagnostic == "step 2 (replace): no match" and unparsed.failure is None

    gone = _compare_patch(decode, file, old, None, None, scopes)
    assert (gone.old, gone.new, gone.diagnostic) == ("applies", NOT_SHIPPED, "")
    assert [s.note for s in gone.scopes] == ["NEW does not ship the target"] * 2


def test_findings_match_by_rule_file_and_message_and_follow_a_moved_copy() -> None:
    other = "qwen3_6_scripts/paged_attn_bi100.py"
    kept = RuleError("no-triton-kernels", SHIPPED, 30, "imports context_attention_fwd")
    moved_line = RuleError("no-triton-kernels", SHIPPED, 31, "imports context_attention_fwd")
    fresh = RuleError("v2-needs-fallback", SHIPPED, 40, "calls paged_attention_v2")
    gone = RuleError("keep-pytorch-fallbacks", SHIPPED, 9, "removes _forward_decode_pytorch")
    assert _differences((kept, gone), (moved_line, fresh), {}) == ((fresh,), (gone,))
    # A moved shipped copy: OLD's finding counts as NEW's under its new name, in its path and its message.
    install = RuleError("install-fails-loudly", "qwen3_6_scripts/patch_ops.sh", 8, f"cp of {SHIPPED} is not checked")
    renamed_install = RuleError("install-fails-loudly", "qwen3_6_scripts/patch_ops.sh", 8, f"cp of {other} is not checked")
    in_new = RuleError("no-triton-kernels", other, 30, "imports context_attention_fwd")
    assert _differences((kept, install), (in_new, renamed_install), {SHIPPED: other}) == ((), ())
    assert _differences((kept, install), (in_new, renamed_install), {}) == ((in_new, renamed_install), (kept, install))
