"""How ``patcher upgrade`` weighs each finding into its verdict: every reason's words, its severity, and the next command.

Built from report values holding the bundled patches, so each kind of
finding is judged alone and all together: a patch that fails, one whose
status changed, changed captures, a changed scope shared by two patches, a
rule error new or not in NEW, a shipped copy that moved or is installed
elsewhere, a target NEW does not ship, mirror groups that appeared or went,
warnings new and gone, errors fixed. The next command follows the most
serious reason and repeats the run's ``--patches``/``--set``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from patcher.patchset.outcome import PatchOutcome, Status
from patcher.records import Closest, Diagnostic
from patcher.report import ExitCode
from patcher.review.upgrade import (NOT_SHIPPED, CaptureChange, PatchComparison, RuleError, RulesOn, ScopeChange,
                                    Shipping, UpgradeReport, installed_text)
from patcher.shipping import Installed, MirrorGroup

from tests.fixtures_cli import INSTALLED, TARGET
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED

OLD, NEW = "old drop.zip", "new.zip"  # a space: the next command quotes it
DECODE = "PagedAttention.forward_decode"
PREFIX = "PagedAttention._forward_prefix_pytorch"
ELSEWHERE = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
SCRIPT = "qwen3_6_scripts/patch_ops.sh"


def install(image: str = INSTALLED, line: int = 8, script: str = "qwen3_6_scripts/patch_ops.sh",
            path: str = SHIPPED) -> Installed:
    return Installed(path, image, script, line, ())


def same(patch, old: str = "applies", new: str = "applies", **changes) -> PatchComparison:  # type: ignore[no-untyped-def]
    return replace(PatchComparison(patch, old, new, "", "", None, (), ()), **changes)


def steady_shipping() -> Shipping:
    return Shipping(TARGET, SHIPPED, SHIPPED, (install(),), (install(),))


def report(patches, **changes) -> UpgradeReport:  # type: ignore[no-untyped-def]
    base = UpgradeReport(OLD, NEW, tuple(patches), (steady_shipping(),), (), (), (), (),
                         rules_old=RulesOn((), (), 3, 3), rules_new=RulesOn((), (), 3, 3))
    return replace(base, **changes)


@pytest.fixture
def patches(bundled, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ROOT)  # a patch file is named relative to the folder the command runs in
    return bundled.patches


# -- nothing to review --------------------------------------------------------------------------


def test_a_drop_that_ships_as_before_passes_and_says_apply_next(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    quiet = report([same(decode), same(gather, "already-applied", "already-applied"), same(reuse)],
                   fixed=(RuleError("no-triton-kernels", SHIPPED, 30, "imports context_attention_fwd"),),
                   gone_warnings=(RuleError("keep-pytorch-fallbacks", SHIPPED, 9, "threshold lowered"),))
    verdict = quiet.verdict
    assert (verdict.exit_code, quiet.exit_code, quiet.needs_review) == (ExitCode.OK, ExitCode.OK, False)
    assert [r.line() for r in verdict.reasons] == [
        f"note: {SHIPPED}:30: no-triton-kernels: imports context_attention_fwd; gone from NEW",
        f"note: {SHIPPED}:9: keep-pytorch-fallbacks: threshold lowered; gone from NEW",
    ]
    assert verdict.statuses == (("three-tier-decode", "applies -> applies"),
                                ("prefix-pregather", "already-applied -> already-applied"),
                                ("prefix-buffer-reuse", "applies -> applies"))
    assert verdict.next == "patcher apply new.zip"
    args = ("--patches", "my patches", "--set", "three-tier-decode.max_gather_tokens=0")
    assert replace(quiet, patch_args=args).verdict.next == (
        "patcher apply new.zip --patches 'my patches' --set three-tier-decode.max_gather_tokens=0")


# -- each finding alone ----------------------------------------------------------------------------


def test_a_patch_that_fails_on_new_is_broken_and_says_what_it_did_on_old(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    failure = PatchOutcome(decode, Status.FAILED, "step 2 (replace): expected 'use_v1 = True' once, found it 0 times",
                           Diagnostic("step", DECODE, "use_v1 = True", 2,
                                      Closest(190, 191, 2, "use_v1 = True", "use_v1 = x", 1, 3)))
    broken = report([same(decode, "applies", "fails", diagnostic=failure.message, failure=failure),
                     same(gather, "already-applied", "fails", diagnostic="gather: no match"),
                     same(reuse, "fails", "fails", diagnostic="reuse: no match")])
    verdict = broken.verdict
    assert [r.line() for r in verdict.reasons] == [
        "broken: patch three-tier-decode: fails on NEW (it applies on OLD): step 2 (replace): expected "
        "'use_v1 = True' once, found it 0 times",
        "broken: patch prefix-pregather: fails on NEW (it is already applied on OLD): gather: no match",
        "broken: patch prefix-buffer-reuse: fails on NEW: reuse: no match",
    ]
    assert verdict.exit_code is ExitCode.DIFFERENCE and broken.needs_review
    assert verdict.next == "patcher diff --keep-going new.zip"
    assert len(verdict.failing) == 3


def test_a_status_that_changed_is_for_review_with_explain_next(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    changed = report([same(decode, "applies", "already-applied"), same(gather, "already-applied", "applies"),
                      same(reuse, NOT_SHIPPED, "applies")], patch_args=("--patches", "p"))
    assert [r.line() for r in changed.verdict.reasons] == [
        "review: patch three-tier-decode: is already applied on NEW, applies on OLD",
        "review: patch prefix-pregather: applies on NEW, is already applied on OLD",
        "review: patch prefix-buffer-reuse: applies on NEW, is not shipped on OLD",
    ]
    assert changed.verdict.next == "patcher explain three-tier-decode --in new.zip --patches p"


def test_changed_captures_name_each_step_and_binding_once_and_say_update_then_test(patches) -> None:  # type: ignore[no-untyped-def]
    decode = patches[0]
    captures = (CaptureChange(2, 1, "HEURISTIC", "a", "b"), CaptureChange(2, 2, "HEURISTIC", "c", "d"),
                CaptureChange(4, 1, "(matched code)", "e", "f"))
    changed = report([same(decode, captures=captures)])
    (reason,) = changed.verdict.reasons
    assert reason.line() == ("review: patch three-tier-decode: applies, but what it captured changed: "
                             "step 2 HEURISTIC, step 4 (matched code)")
    assert changed.verdict.next == ("update patches/three-tier-decode.toml if it must follow the change, "
                                    "then patcher test three-tier-decode")


def test_a_changed_scope_is_one_reason_naming_every_patch_that_relies_on_it(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    prefix = ScopeChange(PREFIX, True, "--- a\n+++ b\n", path=SHIPPED, number=1)
    module = ScopeChange("", True, "--- a\n+++ b\n", "missing in NEW", SHIPPED, number=2)
    calm = ScopeChange(DECODE, False, "")
    changed = report([same(decode, scopes=(calm,)), same(gather, scopes=(prefix, module)),
                      same(reuse, scopes=(prefix,))])
    assert changed.scope_diffs == (prefix, module)
    assert [r.line() for r in changed.verdict.reasons] == [
        f"review: scope {PREFIX}: changed: see diff 1; relied on by prefix-pregather, prefix-buffer-reuse",
        "review: scope (module): changed (missing in NEW): see diff 2; relied on by prefix-pregather",
    ]
    assert changed.verdict.next == ("update patches/prefix-pregather.toml if it must follow the change, "
                                    "then patcher test prefix-pregather")


def test_a_rule_error_in_new_is_unsafe_and_says_how_far_new_was_patched(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    fresh = RuleError("no-triton-kernels", SHIPPED, 30, "imports context_attention_fwd")
    known = RuleError("v2-needs-fallback", "qwen3_6_scripts/other.py", 7, "calls paged_attention_v2")
    unsafe = report([same(decode), same(gather), same(reuse)], new_errors=(fresh,),
                    rules_new=RulesOn((fresh, known), (), 2, 3))
    assert [r.line() for r in unsafe.verdict.reasons] == [
        f"unsafe: {SHIPPED}:30: no-triton-kernels: imports context_attention_fwd; in NEW, patched as far as the "
        "patches apply (2 of 3)",
        "unsafe: qwen3_6_scripts/other.py:7: v2-needs-fallback: calls paged_attention_v2; in NEW, patched as far as "
        "the patches apply (2 of 3) (OLD too)",
    ]
    assert unsafe.verdict.exit_code is ExitCode.DIFFERENCE
    assert unsafe.verdict.next == f"patch it out: patcher new ID --target {TARGET}, then patcher test ID"
    other_first = replace(unsafe, rules_new=RulesOn((known,), (), 3, 3), new_errors=())
    assert other_first.verdict.reasons[0].text.endswith("; in NEW, patched (OLD too)")
    assert other_first.verdict.next == ("patch it out: patcher new ID --target TARGET (where the image runs "
                                        "qwen3_6_scripts/other.py), then patcher test ID")


def test_a_target_new_does_not_ship_is_broken_once_with_inspect_next(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    gone = Shipping(TARGET, SHIPPED, None, (install(),), (), "", "nothing the image ships lands at .../paged_attn.py")
    unshipped = report([same(p, "applies", NOT_SHIPPED) for p in patches], shipping=(gone,))
    assert [r.line() for r in unshipped.verdict.reasons] == [
        f"broken: {TARGET}: NEW ships no single file as it: nothing the image ships lands at .../paged_attn.py"]
    assert unshipped.verdict.next == "patcher inspect new.zip"
    assert (gone.gone, gone.moved) == (True, False)


def test_a_shipped_copy_that_moved_or_is_installed_elsewhere_is_for_review(patches) -> None:  # type: ignore[no-untyped-def]
    other = "qwen3_6_scripts/paged_attn_bi100.py"
    moved = Shipping(TARGET, SHIPPED, other, (install(line=8),), (install(line=9, path=other),))
    elsewhere = Shipping(TARGET, SHIPPED, SHIPPED, (install(),), (install(ELSEWHERE, 12), install(INSTALLED, 13)))
    copied = Shipping(TARGET, SHIPPED, SHIPPED, (), (install(INSTALLED, 0, "Dockerfile"),))
    assert [s.moved for s in (moved, elsewhere, copied, steady_shipping())] == [True, True, True, False]
    found = report([same(p) for p in patches], shipping=(moved, elsewhere, copied))
    assert [r.line() for r in found.verdict.reasons] == [
        f"review: {TARGET}: shipped copy moved: {SHIPPED} -> {other}; installed as "
        f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:8) -> {INSTALLED} (qwen3_6_scripts/patch_ops.sh:9)",
        f"review: {TARGET}: shipped copy moved: {SHIPPED} is installed elsewhere: "
        f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:8) -> {ELSEWHERE} (qwen3_6_scripts/patch_ops.sh:12), "
        f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:13)",
        f"review: {TARGET}: shipped copy moved: {SHIPPED} is installed elsewhere: nothing -> {INSTALLED}",
    ]
    assert found.verdict.next == "patcher inspect new.zip"
    dropped = Shipping(TARGET, SHIPPED, SHIPPED, (install(INSTALLED, 8), install(ELSEWHERE, 9)), ())
    (reason,) = report([same(p) for p in patches], shipping=(dropped,)).verdict.reasons
    assert reason.text == (f"shipped copy moved: {SHIPPED} is installed elsewhere: {INSTALLED} ({SCRIPT}:8), "
                           f"{ELSEWHERE} ({SCRIPT}:9) -> nothing")
    # The same places in another order, or by other lines, are no move.
    assert not Shipping(TARGET, SHIPPED, SHIPPED, (install(INSTALLED, 3), install(ELSEWHERE, 4)),
                        (install(ELSEWHERE, 14), install(INSTALLED, 15))).moved
    assert not Shipping(TARGET, None, SHIPPED, (), (install(),)).moved
    assert not Shipping(TARGET, None, None, (), ()).gone


def test_mirror_groups_that_appeared_or_went_are_for_review_with_verify_sync_next(patches) -> None:  # type: ignore[no-untyped-def]
    appeared = MirrorGroup("qwen3_6_scripts/sequence.py", ("sequence.py", "old/sequence.py"))
    went = MirrorGroup(SHIPPED, ("paged_attn.py",))
    found = report([same(p) for p in patches], mirrors_appeared=(appeared,), mirrors_went=(went,))
    assert [r.line() for r in found.verdict.reasons] == [
        "review: qwen3_6_scripts/sequence.py: mirror group appeared: sequence.py, old/sequence.py",
        f"review: {SHIPPED}: mirror group went: paged_attn.py",
    ]
    assert found.verdict.next == "patcher verify-sync new.zip"
    assert replace(found, mirrors_appeared=()).verdict.next == "patcher verify-sync new.zip"


def test_a_warning_new_in_new_is_for_review_with_check_next(patches) -> None:  # type: ignore[no-untyped-def]
    warning = RuleError("install-fails-loudly", "qwen3_6_scripts/patch_ops.sh", 8, "a failed cp does not stop the build")
    found = report([same(p) for p in patches], new_warnings=(warning,))
    assert [r.line() for r in found.verdict.reasons] == [
        "review: qwen3_6_scripts/patch_ops.sh:8: install-fails-loudly: a failed cp does not stop the build; new in NEW"]
    assert found.verdict.next == "patcher check new.zip"


# -- all together: the order and the next command ---------------------------------------------------


def test_reasons_come_most_serious_first_and_next_follows_the_worst(patches) -> None:  # type: ignore[no-untyped-def]
    decode, gather, reuse = patches
    moved = Shipping(TARGET, SHIPPED, SHIPPED, (install(),), (install(ELSEWHERE),))
    warning = RuleError("install-fails-loudly", "qwen3_6_scripts/patch_ops.sh", 8, "w")
    error = RuleError("no-triton-kernels", SHIPPED, 30, "e")
    everything = report(
        [same(decode, "applies", "already-applied"), same(gather, captures=(CaptureChange(1, 1, "X", "a", "b"),)),
         same(reuse, "applies", "fails", diagnostic="no match")],
        shipping=(moved,), new_warnings=(warning,), new_errors=(error,), rules_new=RulesOn((error,), (warning,), 2, 3),
        fixed=(RuleError("v2-needs-fallback", SHIPPED, 3, "f"),))
    assert [(r.severity.name, r.subject) for r in everything.verdict.reasons] == [
        ("BROKEN", "patch prefix-buffer-reuse"), ("UNSAFE", f"{SHIPPED}:30"),
        ("REVIEW", "patch three-tier-decode"), ("REVIEW", "patch prefix-pregather"), ("REVIEW", TARGET),
        ("REVIEW", "qwen3_6_scripts/patch_ops.sh:8"), ("NOTE", f"{SHIPPED}:3"),
    ]
    assert everything.verdict.next == "patcher diff --keep-going new.zip"
    without_broken = replace(everything, patches=everything.patches[:2])
    assert without_broken.verdict.next == f"patch it out: patcher new ID --target {TARGET}, then patcher test ID"
    reviews_only = replace(without_broken, new_errors=(), rules_new=RulesOn((), (), 3, 3))
    assert reviews_only.verdict.next == "patcher explain three-tier-decode --in new.zip"


# -- the pieces the verdict is made of -----------------------------------------------------------------


def test_a_patch_needs_review_when_anything_about_it_differs(patches) -> None:  # type: ignore[no-untyped-def]
    decode = patches[0]
    assert not same(decode).needs_review
    assert not same(decode, "already-applied", "already-applied").needs_review
    assert not same(decode, scopes=(ScopeChange(DECODE, False, ""), ScopeChange(PREFIX, None, "", "x"))).needs_review
    assert same(decode, "fails", "fails").needs_review
    assert same(decode, NOT_SHIPPED, NOT_SHIPPED).needs_review
    assert same(decode, "applies", "already-applied").needs_review
    assert same(decode, captures=(CaptureChange(1, 1, "X", "a", "b"),)).needs_review
    assert same(decode, captures=(CaptureChange(1, 1, "X", "a", "b"),)).captures_changed
    assert not same(decode).captures_changed
    assert same(decode, scopes=(ScopeChange(DECODE, False, ""), ScopeChange(PREFIX, True, "d"))).needs_review


def test_the_rules_say_whether_they_judged_the_whole_patched_drop() -> None:
    assert (RulesOn((), (), 3, 3).complete, RulesOn((), (), 3, 3).built()) == (True, "patched")
    assert (RulesOn((), (), 0, 3).complete, RulesOn((), (), 0, 3).built()) == (
        False, "patched as far as the patches apply (0 of 3)")


def test_an_install_is_written_with_the_script_line_that_does_it() -> None:
    assert installed_text(install(line=8)) == f"{INSTALLED} (qwen3_6_scripts/patch_ops.sh:8)"
    assert installed_text(install(f"/workspace/{SHIPPED}", 0, "Dockerfile")) == f"/workspace/{SHIPPED}"


def test_a_patch_file_outside_the_working_folder_is_named_in_full(patches, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    changed = report([same(patches[0], captures=(CaptureChange(2, 1, "HEURISTIC", "a", "b"),))])
    assert changed.verdict.next == (f"update {PATCHES / 'three-tier-decode.toml'} if it must follow the change, "
                                    "then patcher test three-tier-decode")
