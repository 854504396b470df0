"""How ``patcher upgrade`` shows its report: the text for a terminal, the JSON fields, the Markdown for the pull request.

Built from one report value that holds every kind of finding (a failing
patch with its closest code, changed captures, two changed scopes one of
them the module's, a target NEW does not ship, a copy installed elsewhere,
one that moved, mirror groups that appeared and went, rule errors and
warnings new and gone), so each part of each rendering is pinned whole.
"""

from __future__ import annotations

import json

import pytest

from patcher.patchset.outcome import PatchOutcome, Status
from patcher.records import Closest, Diagnostic
from patcher.review import upgrade_render
from patcher.review.upgrade import (NOT_SHIPPED, CaptureChange, PatchComparison, RuleError, RulesOn, ScopeChange,
                                    Shipping, UpgradeReport)
from patcher.shipping import Installed, MirrorGroup

from tests.fixtures_cli import INSTALLED, TARGET
from tests.fixtures_vendor import SHIPPED

ELSEWHERE = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
OTHER = "qwen3_6_scripts/paged_attn_bi100.py"
PREFIX = "PagedAttention._forward_prefix_pytorch"
SCRIPT = "qwen3_6_scripts/patch_ops.sh"
FAILED = "step 2 (replace): expected 'use_v1 = True' once, found it 0 times"
CLOSEST = "closest: lines 190-191, statement 2 differs: pattern 'use_v1 = True', code 'use_v1 = x'"
# A vendor docstring's own Markdown fence, as a context line of the scope diff.
PREFIX_DIFF = f"--- a/{SHIPPED} ({PREFIX})\n+++ b/{SHIPPED} ({PREFIX})\n@@ -3,2 +3,2 @@\n ```\n-a\n+b\n"
MODULE_DIFF = f"--- a/{SHIPPED} ((module))\n+++ b/{SHIPPED} ((module))\n@@ -0,0 +1 @@\n+import os\n"


def install(image: str = INSTALLED, line: int = 8, path: str = SHIPPED, script: str = SCRIPT) -> Installed:
    return Installed(path, image, script, line, ())


def full_report(patches) -> UpgradeReport:  # type: ignore[no-untyped-def]
    """One report of each finding upgrade can make."""
    decode, gather, reuse = patches
    failure = PatchOutcome(decode, Status.FAILED, FAILED, Diagnostic(
        "step", "PagedAttention.forward_decode", "use_v1 = True", 2, Closest(190, 191, 2, "use_v1 = True", "use_v1 = x", 1, 3)))
    prefix = ScopeChange(PREFIX, True, PREFIX_DIFF, path=SHIPPED, number=1)
    module = ScopeChange("", True, MODULE_DIFF, "missing in OLD", SHIPPED, 2)
    compared = (
        PatchComparison(decode, "applies", "fails", failure.message, "", failure, (),
                        (ScopeChange("PagedAttention.forward_decode", False, ""),
                         ScopeChange("PagedAttention", False, "", "comments only"))),
        PatchComparison(gather, "applies", "applies", "", "", None,
                        (CaptureChange(1, 1, "BLOCKS", "32", "64"), CaptureChange(1, 0, "(matches)", "2", "1")),
                        (prefix, module)),
        PatchComparison(reuse, "already-applied", NOT_SHIPPED, "", "", None, (),
                        (ScopeChange(PREFIX, None, "", "NEW does not ship the target", SHIPPED),)),
    )
    shipping = (Shipping(TARGET, SHIPPED, SHIPPED, (install(),), (install(),)),
                Shipping(TARGET, SHIPPED, SHIPPED, (install(),), (install(ELSEWHERE, 12),)),
                Shipping(TARGET, SHIPPED, OTHER, (install(),), (install(path=OTHER, line=9),)),
                Shipping(TARGET, SHIPPED, None, (install(),), (), "", "nothing lands there"),
                Shipping(TARGET, None, SHIPPED, (), (install(INSTALLED, 0, script="Dockerfile"),), "not shipped by OLD"))
    error = RuleError("no-triton-kernels", SHIPPED, 30, "imports context_attention_fwd")
    warning = RuleError("install-fails-loudly", SCRIPT, 8, "a failed cp goes on")
    fixed = RuleError("v2-needs-fallback", SHIPPED, 3, "calls paged_attention_v2 unguarded")
    gone = RuleError("keep-pytorch-fallbacks", SHIPPED, 9, "no PyTorch decode")
    return UpgradeReport("old.zip", "new.zip", compared, shipping,
                         (MirrorGroup("qwen3_6_scripts/sequence.py", ("sequence.py", "x/sequence.py")),),
                         (MirrorGroup(SHIPPED, ("paged_attn.py",)),), (error,), (fixed,), (warning,), (gone,),
                         RulesOn((fixed,), (gone,), 3, 3), RulesOn((error,), (warning,), 1, 3), ("--patches", "p"))


@pytest.fixture
def report(bundled) -> UpgradeReport:  # type: ignore[no-untyped-def]
    return full_report(bundled.patches)


REASONS = [
    f"broken: {TARGET}: NEW ships no single file as it: nothing lands there",
    f"broken: patch three-tier-decode: fails on NEW (it applies on OLD): {FAILED}",
    f"unsafe: {SHIPPED}:30: no-triton-kernels: imports context_attention_fwd; in NEW, patched as far as the patches "
    "apply (1 of 3)",
    "review: patch prefix-pregather: applies, but what it captured changed: step 1 BLOCKS, step 1 (matches)",
    f"review: scope {PREFIX}: changed: see diff 1; relied on by prefix-pregather",
    "review: scope (module): changed (missing in OLD): see diff 2; relied on by prefix-pregather",
    f"review: {TARGET}: shipped copy moved: {SHIPPED} is installed elsewhere: {INSTALLED} ({SCRIPT}:8) -> "
    f"{ELSEWHERE} ({SCRIPT}:12)",
    f"review: {TARGET}: shipped copy moved: {SHIPPED} -> {OTHER}; installed as {INSTALLED} ({SCRIPT}:8) -> "
    f"{INSTALLED} ({SCRIPT}:9)",
    "review: qwen3_6_scripts/sequence.py: mirror group appeared: sequence.py, x/sequence.py",
    f"review: {SHIPPED}: mirror group went: paged_attn.py",
    f"review: {SCRIPT}:8: install-fails-loudly: a failed cp goes on; new in NEW",
    f"note: {SHIPPED}:3: v2-needs-fallback: calls paged_attention_v2 unguarded; gone from NEW",
    f"note: {SHIPPED}:9: keep-pytorch-fallbacks: no PyTorch decode; gone from NEW",
]


def test_the_text_report_says_everything_in_order(report) -> None:  # type: ignore[no-untyped-def]
    assert upgrade_render.text(report).splitlines() == [
        "patcher upgrade old.zip -> new.zip: exit 1: 11 reasons to look before shipping NEW, most serious first:",
        *(f"  {line}" for line in REASONS),
        "",
        "patch three-tier-decode: applies -> fails (needs review)",
        f"  fails on NEW: {FAILED}; {CLOSEST}",
        "  scope PagedAttention.forward_decode: unchanged",
        "  scope PagedAttention: unchanged (comments only)",
        "patch prefix-pregather: applies -> applies (needs review)",
        "  applies, but what it captured changed:",
        "    step 1, match 1, BLOCKS:",
        "      before: 32",
        "      after:  64",
        "    step 1, (matches):",
        "      before: 2",
        "      after:  1",
        f"  scope {PREFIX}: changed: see diff 1",
        "  scope (module): changed (missing in OLD): see diff 2",
        "patch prefix-buffer-reuse: already-applied -> not-shipped (needs review)",
        "  not patched on NEW: NEW does not ship its target",
        f"  scope {PREFIX}: not compared (NEW does not ship the target)",
        "",
        f"diff 1: scope {PREFIX} in {SHIPPED} (relied on by prefix-pregather)",
        *(f"    {line}" for line in PREFIX_DIFF.splitlines()),
        "",
        f"diff 2: scope (module) in {SHIPPED}, missing in OLD (relied on by prefix-pregather)",
        *(f"    {line}" for line in MODULE_DIFF.splitlines()),
        "",
        f"shipped copy of {TARGET}: {SHIPPED}, unchanged",
        f"shipped copy of {TARGET} ({SHIPPED}) is installed elsewhere: {INSTALLED} ({SCRIPT}:8) -> {ELSEWHERE} ({SCRIPT}:12)",
        f"shipped copy of {TARGET} moved: {SHIPPED} -> {OTHER}; installed as {INSTALLED} ({SCRIPT}:8) -> "
        f"{INSTALLED} ({SCRIPT}:9)",
        f"shipped copy of {TARGET}: NOT SHIPPED by NEW (nothing lands there); OLD ships {SHIPPED}",
        f"shipped copy of {TARGET}: {SHIPPED}; OLD shipped none (not shipped by OLD)",
        "mirror group appeared: qwen3_6_scripts/sequence.py <- sequence.py, x/sequence.py",
        f"mirror group went: {SHIPPED} <- paged_attn.py",
        "safety rules on OLD, patched: 1 error(s), 1 warning(s)",
        "safety rules on NEW, patched as far as the patches apply (1 of 3): 1 error(s), 1 warning(s)",
        f"safety rule error new in NEW: {SHIPPED}:30: no-triton-kernels: imports context_attention_fwd",
        f"safety rule error gone in NEW: {SHIPPED}:3: v2-needs-fallback: calls paged_attention_v2 unguarded",
        f"rule warning new in NEW: {SCRIPT}:8: install-fails-loudly: a failed cp goes on",
        f"rule warning gone in NEW: {SHIPPED}:9: keep-pytorch-fallbacks: no PyTorch decode",
        "next: patcher inspect new.zip",
    ]
    assert upgrade_render.text(report).endswith("next: patcher inspect new.zip\n")


def test_a_report_with_nothing_to_review_says_exit_0_and_what_it_rests_on(report) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    calm = tuple(replace(p, old="applies", new="applies", diagnostic="", failure=None, captures=(), scopes=())
                 for p in report.patches)
    quiet = replace(report, patches=calm, shipping=report.shipping[:1], mirrors_appeared=(), mirrors_went=(),
                    new_errors=(), new_warnings=(), rules_new=RulesOn((), (), 3, 3))
    lines = upgrade_render.text(quiet).splitlines()
    assert lines[0] == ("patcher upgrade old.zip -> new.zip: exit 0: every patch applies on NEW as on OLD, the patched "
                        "NEW passes the safety rules, and the shipped copies are where they were")
    assert lines[1:3] == [f"  note: {SHIPPED}:3: v2-needs-fallback: calls paged_attention_v2 unguarded; gone from NEW",
                          f"  note: {SHIPPED}:9: keep-pytorch-fallbacks: no PyTorch decode; gone from NEW"]
    assert "patch three-tier-decode: applies -> applies" in lines and lines[-1] == "next: patcher apply new.zip --patches p"
    one = replace(quiet, new_warnings=(report.new_warnings[0],))
    assert upgrade_render.text(one).splitlines()[0] == (
        "patcher upgrade old.zip -> new.zip: exit 1: 1 reason to look before shipping NEW, most serious first:")


def test_a_scope_line_says_changed_unchanged_or_not_compared() -> None:
    line = upgrade_render._scope_line
    assert line(ScopeChange("A.f", True, "", "NEW does not parse")) == "scope A.f: changed (NEW does not parse)"
    assert line(ScopeChange("A.f", True, "d", number=4)) == "scope A.f: changed: see diff 4"
    assert line(ScopeChange("", None, "", "OLD does not ship the target")) == (
        "scope (module): not compared (OLD does not ship the target)")
    assert line(ScopeChange("A", False, "")) == "scope A: unchanged"


def test_json_gives_every_field(report) -> None:  # type: ignore[no-untyped-def]
    data = upgrade_render.to_json(report)
    assert json.loads(upgrade_render.to_json_text(report)) == data
    assert upgrade_render.to_json_text(report).startswith('{\n  "old": "old.zip",\n  "new": "new.zip",\n')
    assert (data["old"], data["new"], data["needs_review"], data["next"]) == ("old.zip", "new.zip", True,
                                                                              "patcher inspect new.zip")
    assert data["verdict"]["exit_code"] == 1 and data["verdict"]["passed"] is False
    assert [f"{r['severity']}: {r['subject']}: {r['text']}" for r in data["verdict"]["reasons"]] == REASONS
    decode, gather, reuse = data["patches"]
    assert decode == {
        "id": "three-tier-decode", "old": "applies", "new": "fails", "diagnostic": f"{FAILED}; {CLOSEST}",
        "closest": report.patches[0].failure.diagnostic.to_json(), "old_diagnostic": "", "captures_changed": False,
        "captures": [], "needs_review": True,
        "scopes": [{"scope": "PagedAttention.forward_decode", "changed": False, "diff": "", "note": ""},
                   {"scope": "PagedAttention", "changed": False, "diff": "", "note": "comments only"}],
    }
    assert gather["captures"] == [{"step": 1, "match": 1, "binding": "BLOCKS", "old": "32", "new": "64"},
                                  {"step": 1, "match": 0, "binding": "(matches)", "old": "2", "new": "1"}]
    assert (gather["captures_changed"], gather["closest"]) == (True, None)
    assert gather["scopes"][1] == {"scope": "", "changed": True, "diff": MODULE_DIFF, "note": "missing in OLD"}
    assert reuse["scopes"] == [{"scope": PREFIX, "changed": None, "diff": "", "note": "NEW does not ship the target"}]
    assert data["scope_diffs"] == [
        {"number": 1, "scope": PREFIX, "path": SHIPPED, "note": "", "diff": PREFIX_DIFF, "patches": ["prefix-pregather"]},
        {"number": 2, "scope": "", "path": SHIPPED, "note": "missing in OLD", "diff": MODULE_DIFF,
         "patches": ["prefix-pregather"]},
    ]
    # One entry per target: the last Shipping of a target is the one a dict keeps.
    assert data["shipping"] == {TARGET: {"old": None, "new": SHIPPED, "old_installed": [], "new_installed": [INSTALLED],
                                         "moved": False, "gone": False, "old_problem": "not shipped by OLD",
                                         "new_problem": ""}}
    assert data["mirrors"] == {"appeared": [{"shipped": "qwen3_6_scripts/sequence.py",
                                             "mirrors": ["sequence.py", "x/sequence.py"]}],
                               "went": [{"shipped": SHIPPED, "mirrors": ["paged_attn.py"]}]}
    rules = data["rules"]
    assert rules["new_errors"] == [{"rule": "no-triton-kernels", "path": SHIPPED, "line": 30,
                                    "message": "imports context_attention_fwd"}]
    assert [e["rule"] for e in (*rules["fixed"], *rules["new_warnings"], *rules["gone_warnings"])] == [
        "v2-needs-fallback", "install-fails-loudly", "keep-pytorch-fallbacks"]
    assert rules["old"] == {"complete": True, "applied": 3, "patches": 3,
                            "errors": rules["fixed"], "warnings": rules["gone_warnings"]}
    assert rules["new"] == {"complete": False, "applied": 1, "patches": 3,
                            "errors": rules["new_errors"], "warnings": rules["new_warnings"]}


def test_json_names_each_install_with_its_script_line(report) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    moved = replace(report, shipping=(report.shipping[1],))
    assert upgrade_render.to_json(moved)["shipping"] == {TARGET: {
        "old": SHIPPED, "new": SHIPPED, "old_installed": [f"{INSTALLED} ({SCRIPT}:8)"],
        "new_installed": [f"{ELSEWHERE} ({SCRIPT}:12)"], "moved": True, "gone": False, "old_problem": "",
        "new_problem": ""}}


def test_the_markdown_gives_verdict_table_patches_diffs_shipping_mirrors_rules_and_next(report) -> None:  # type: ignore[no-untyped-def]
    text = upgrade_render.markdown(report)
    assert text.startswith("### patcher upgrade: `old.zip` -> `new.zip`\n\n**Exit 1: not ready to ship.** Reasons, "
                           "most serious first:\n\n- **broken** `vllm/attention/ops/paged_attn.py`: NEW ships no single "
                           "file as it: nothing lands there\n")
    assert ("| `three-tier-decode` | applies | fails | no | none |\n"
            f"| `prefix-pregather` | applies | applies | yes | `{PREFIX}`, `(module)` |\n"
            "| `prefix-buffer-reuse` | already-applied | not-shipped | no | none |\n") in text
    assert (f"#### `three-tier-decode`\n\nFails on the new drop: {FAILED}; {CLOSEST}\n") in text
    assert ("- step 1, match 1, `BLOCKS`: `32` -> `64`\n- step 1, `(matches)`: `2` -> `1`\n\n"
            f"- scope `{PREFIX}` changed: see diff 1\n- scope `(module)` changed (missing in OLD): see diff 2\n") in text
    assert f"- scope `{PREFIX}` not compared: NEW does not ship the target\n" in text
    # The scope diff holds a context line " ```": its fence is longer, so that line cannot close it.
    assert (f"<summary>diff 1: <code>{PREFIX}</code> in <code>{SHIPPED}</code>, relied on by prefix-pregather</summary>"
            f"\n\n````diff\n{PREFIX_DIFF}````\n") in text
    assert (f"<summary>diff 2: <code>(module)</code> in <code>{SHIPPED}</code> (missing in OLD), relied on by "
            f"prefix-pregather</summary>\n\n```diff\n{MODULE_DIFF}```\n") in text
    shipped = text.split("#### Shipped copies\n\n")[1].split("\n\n")[0].splitlines()
    assert shipped == [f"- {upgrade_render._shipping_line(s)}" for s in report.shipping[1:]]  # the unchanged one left out
    assert ("#### Safety rules\n\n- OLD, patched: 1 error(s), 1 warning(s)\n"
            "- NEW, patched as far as the patches apply (1 of 3): 1 error(s), 1 warning(s)\n") in text
    assert text.rstrip().endswith("**Next:** `patcher inspect new.zip`")
