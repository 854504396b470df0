"""Each case ``patcher test`` runs passes or fails as its kind says, with the message and diff the author reads.

One patch (an insert of ``assert actual_max >= 0`` after ``actual_max =``
in ``forward_decode``) and one example of each kind an author writes, good
and wrong: a ``before``/``after`` pair, a wrong ``after``, an ``error``
example that fails as it should, with other text, or not at all, an
example with neither that is or is not already patched, an ``after``
example on code already patched, a ``before`` that does not parse, params
that do not load, and no example at all. Which cases exist (LF and CRLF;
the round trips only with an ``after``; series cases only where two
patches share a target, without ``error`` examples) and how a report adds
them up are pinned too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patcher.authoring.cases import Case, Check, TestReport, collect_cases, run_case, run_cases, select_patches
from patcher.errors import PatcherError
from patcher.patchset import load_patch_set

from tests.fixtures_patches import insert_step, patch_toml, replace_step, write_patch_set

BEFORE = "def forward_decode(q):\n    actual_max = q.max()\n    return q\n"
AFTER = "def forward_decode(q):\n    actual_max = q.max()\n    assert actual_max >= 0\n    return q\n"
NO_MAX = "def forward_decode(q):\n    return q\n"
NOT_FOUND = ("step 1 (insert): expected the anchor 'actual_max = $_' once, found it 0 times in forward_decode; "
             "closest: line 2, statement 1 differs: pattern 'actual_max = $_', code 'return q'")
PARSE_ERROR = ("line 2, column 0: expected one of +, -, ..., AWAIT, False, NAME, NUMBER, None, True, lambda, not, ~; "
               "it does not parse under Python 3.11 either (Python 2 code, or a broken file?)")


def guard(*examples: str, header: str = "") -> str:
    """The guard patch with EXAMPLES (TOML tables)."""
    return patch_toml("decode-guard", insert_step("after", "actual_max = $_", "assert actual_max >= 0"),
                      scope="forward_decode", header='applied-when = ["assert actual_max >= 0"]\n' + header) + \
        "".join(examples)


def example(name: str, **keys: str) -> str:
    """One ``[[examples]]`` table; a value holding a line break is written as a literal block."""
    lines = ["", "[[examples]]", f'name = "{name}"']
    for key, value in keys.items():
        lines.append(f"{key} = {value}" if key == "params" else
                     f"{key} = '''\n{value}'''" if "\n" in value else f'{key} = "{value}"')
    return "\n".join(lines) + "\n"


def results(tmp_path: Path, text: str, **more: str) -> dict[str, tuple[bool, str, str]]:
    """Run every case of the guard patch (and MORE patches after it): label -> (passed, message, diff)."""
    folder = write_patch_set(tmp_path, {"decode-guard.toml": text, **more})
    cases = collect_cases(load_patch_set(folder), ["decode-guard", *(name[:-5] for name in more)])
    return {case.label: ((r := run_case(case)).passed, r.message, r.diff) for case in cases}


def test_a_good_example_gives_six_passing_cases(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("ok", before=BEFORE, after=AFTER)))
    assert list(found) == [
        "decode-guard: ok [LF]", "decode-guard: ok [CRLF]",
        "decode-guard: ok [recognises its own result, LF]", "decode-guard: ok [recognises its own result, CRLF]",
        "decode-guard: ok [applying twice changes nothing, LF]",
        "decode-guard: ok [applying twice changes nothing, CRLF]"]
    assert set(found.values()) == {(True, "", "")}


def test_a_wrong_after_fails_with_a_diff_of_expected_against_got(tmp_path: Path) -> None:
    wrong = AFTER.replace(">= 0", "> 0")
    found = results(tmp_path, guard(example("wrong", before=BEFORE, after=wrong)))
    diff = ("--- expected\n+++ got\n@@ -1,4 +1,4 @@\n def forward_decode(q):\n     actual_max = q.max()\n"
            "-    assert actual_max > 0\n+    assert actual_max >= 0\n     return q")
    assert found["decode-guard: wrong [LF]"] == (False, "the result differs from 'after'", diff)
    assert found["decode-guard: wrong [CRLF]"] == (False, "the result differs from 'after'", diff)
    # Its own result is not that 'after', so the patch applies to 'after' again.
    recognised = found["decode-guard: wrong [recognises its own result, LF]"]
    assert recognised[:2] == (False, "on its own 'after' the patch should report 'already applied' and change "
                                     "nothing, got applied (changed the code)")
    assert recognised[2].splitlines()[4:7] == ["     actual_max = q.max()", "+    assert actual_max >= 0",
                                               "     assert actual_max > 0"]
    assert found["decode-guard: wrong [applying twice changes nothing, CRLF]"] == (True, "", "")


def test_an_error_example_passes_only_when_the_patch_fails_with_its_text(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("no actual_max", before=NO_MAX, error="found it 0 times"),
                                    example("other text", before=NO_MAX, error="is not there"),
                                    example("applies", before=BEFORE, error="found it 0 times")))
    assert found["decode-guard: no actual_max [LF]"] == (True, "", "")
    assert found["decode-guard: no actual_max [CRLF]"] == (True, "", "")
    assert found["decode-guard: other text [CRLF]"] == (
        False, f"expected an error containing 'is not there', got failed: {NOT_FOUND}",
        f"--- expected\n+++ got\n@@ -1 +1 @@\n-fails with: ...is not there...\n+fails with: {NOT_FOUND}")
    assert found["decode-guard: applies [LF]"] == (
        False, "expected an error containing 'found it 0 times', got applied (changed the code)",
        "--- expected\n+++ got\n@@ -1 +1 @@\n-fails with: ...found it 0 times...\n+applied")
    # An error example has no result to recognise or apply twice.
    assert not any("no actual_max [recognises" in label or "no actual_max [applying" in label for label in found)


def test_an_error_example_must_leave_the_code_as_it_was(tmp_path: Path) -> None:
    # The second step fails after the first changed the code: the patch fails, and nothing of it is kept.
    two_steps = patch_toml("decode-guard", insert_step("after", "actual_max = $_", "assert actual_max >= 0") +
                           replace_step("return q", "return q.clone()", expect=2), scope="forward_decode",
                           header='applied-when = ["assert actual_max >= 0"]\n')
    found = results(tmp_path, two_steps + example("one return", before=BEFORE, error="found it 1 time"))
    assert found["decode-guard: one return [LF]"] == (True, "", "")


def test_an_example_with_neither_must_be_already_applied(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("patched", before=AFTER), example("vendor", before=BEFORE)))
    assert found["decode-guard: patched [LF]"] == (True, "", "")
    assert found["decode-guard: patched [CRLF]"] == (True, "", "")
    assert found["decode-guard: vendor [CRLF]"] == (
        False, "expected 'already applied' and no change (the example has no 'after' or 'error'), got applied "
               "(changed the code)",
        "--- expected\n+++ got\n@@ -1,3 +1,4 @@\n def forward_decode(q):\n     actual_max = q.max()\n"
        "+    assert actual_max >= 0\n     return q")
    assert len(found) == 4  # no round trips without an 'after'


def test_an_after_example_on_code_already_patched_fails_every_case_but_recognition(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("twice", before=AFTER, after=AFTER)))
    assert found["decode-guard: twice [LF]"] == (False, "the patch already applied (changed nothing)", "")
    assert found["decode-guard: twice [recognises its own result, CRLF]"] == (True, "", "")
    assert found["decode-guard: twice [applying twice changes nothing, LF]"] == (
        False, "the first run did not apply: already applied (changed nothing)", "")


def test_a_before_that_does_not_parse_says_so(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("broken", before="def forward_decode(q:\n", after=AFTER)))
    assert found["decode-guard: broken [CRLF]"] == (False, f"'before' does not parse: {PARSE_ERROR}", "")
    assert found["decode-guard: broken [applying twice changes nothing, LF]"] == (
        False, f"the first run did not apply: a parse error: {PARSE_ERROR}", "")


def test_example_params_the_patch_cannot_render_with_fail_each_case_of_that_example(tmp_path: Path) -> None:
    # In bounds, so the set loads; rendered with it, the code divides by zero.
    text = patch_toml("decode-guard", insert_step("after", "actual_max = $_", "assert actual_max >= {{ 64 // tiles }}"),
                      scope="forward_decode", header='applied-when = ["assert actual_max >= {{ 64 // tiles }}"]\n'
                                                     '\n[params.tiles]\ntype = "int"\ndefault = 64\nmin = 0\n')
    found = results(tmp_path, text + example("no tiles", before=BEFORE, after=AFTER.replace(">= 0", ">= 1"),
                                             params="{ tiles = 0 }") +
                    example("ok", before=BEFORE, after=AFTER.replace(">= 0", ">= 1")))
    failed = {label: message for label, (passed, message, _) in found.items() if not passed}
    assert sorted(failed) == sorted(f"decode-guard: no tiles [{check}{variant}]" for variant in ("LF", "CRLF")
                                    for check in ("", "recognises its own result, ", "applying twice changes nothing, "))
    (message,) = set(failed.values())
    assert message.startswith("the example's params do not load: ") and "ZeroDivisionError" in message
    assert found["decode-guard: ok [LF]"] == (True, "", "")


def test_a_patch_without_examples_fails_once_saying_where_to_add_one(tmp_path: Path) -> None:
    found = results(tmp_path, guard(example("empty", before="  \n", after=AFTER)))
    assert found == {"decode-guard: examples": (
        False, "patch decode-guard: example not written yet (add an [[examples]] table with 'before' and 'after' or "
               "'error' to decode-guard.toml)", "")}


def test_series_cases_run_each_example_through_every_patch_of_its_target(tmp_path: Path) -> None:
    later = patch_toml("decode-clone", replace_step("return q", "return q.clone()"), scope="forward_decode",
                       header='applied-when = ["return q.clone()"]\n') + example(
        "clone", before=BEFORE, after=BEFORE.replace("return q", "return q.clone()"))
    found = results(tmp_path, guard(example("ok", before=BEFORE, after=AFTER),
                                    example("no actual_max", before=NO_MAX, error="found it 0 times")),
                    **{"decode-clone.toml": later})
    series = [label for label in found if label.startswith("series: ")]
    # Error examples are left out: their patch must not apply there.
    assert series == ["series: decode-guard: ok [every marker holds after the series]",
                      "series: decode-clone: clone [every marker holds after the series]"]
    assert found[series[0]] == (True, "", "")


def test_a_series_case_names_the_later_patch_that_breaks_a_marker(tmp_path: Path) -> None:
    # The guard is recognised by the vendor's 'return q' too; a later patch rewrites that line.
    kept = guard(example("ok", before=BEFORE, after=AFTER), header='requires = ["actual_max = $_"]\n').replace(
        'applied-when = ["assert actual_max >= 0"]', 'applied-when = ["assert actual_max >= 0", "return q"]')
    later = patch_toml("decode-clone", replace_step("return q", "return q.clone()"), scope="forward_decode",
                       header='applied-when = ["return q.clone()"]\n') + example(
        "clone", before=BEFORE, after=BEFORE.replace("return q", "return q.clone()"))
    found = results(tmp_path, kept, **{"decode-clone.toml": later})
    passed, message, diff = found["series: decode-guard: ok [every marker holds after the series]"]
    assert (passed, diff) == (False, "")
    assert message == ("patch decode-clone: rewrites 'return q' in forward_decode, which patch decode-guard's "
                       "applied-when marker needs: decode-guard would not be recognised on re-apply, and would apply "
                       "again; make decode-clone leave that code, or change decode-guard's marker")
    # The guard's own cases still pass: only the series shows what the later patch breaks.
    assert found["decode-guard: ok [recognises its own result, LF]"] == (True, "", "")


def test_a_target_only_one_patch_edits_has_no_series_case(tmp_path: Path) -> None:
    other = patch_toml("other-file", replace_step("return q", "return q.clone()"), scope="forward_decode",
                       target="y.py", header='applied-when = ["return q.clone()"]\n') + example(
        "clone", before=BEFORE, after=BEFORE.replace("return q", "return q.clone()"))
    found = results(tmp_path, guard(example("ok", before=BEFORE, after=AFTER)), **{"other-file.toml": other})
    assert not any(label.startswith("series") for label in found)


def test_patches_are_chosen_by_id_in_series_order(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path, {name + ".toml": patch_toml(name, replace_step("a", "b")) for name in
                                        ("decode-guard", "decode-clone", "prefix-tiles")})
    patch_set = load_patch_set(folder)
    assert [p.id for p in select_patches(patch_set, ["prefix-tiles", "decode-guard"])] == ["decode-guard",
                                                                                          "prefix-tiles"]
    assert [p.id for p in select_patches(patch_set, [])] == ["decode-guard", "decode-clone", "prefix-tiles"]
    with pytest.raises(PatcherError) as close:
        select_patches(patch_set, ["decode-guards"])
    assert str(close.value) == f"{folder / 'series'}: no patch 'decode-guards' in the series (did you mean 'decode-guard'?)"
    with pytest.raises(PatcherError) as far:
        select_patches(patch_set, ["kv-cache-fp8"])
    assert str(far.value) == (f"{folder / 'series'}: no patch 'kv-cache-fp8' in the series (the series has: "
                              "decode-guard, decode-clone, prefix-tiles)")


def test_a_report_adds_its_cases_up(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path, {"decode-guard.toml": guard(
        example("ok", before=BEFORE, after=AFTER), example("wrong", before=BEFORE, after=AFTER.replace(">=", ">")))})
    patch_set = load_patch_set(folder)
    report = run_cases(folder, collect_cases(patch_set, ["decode-guard"]), inactive=["later-patch"])
    assert (report.passed, report.failed, report.summary()) == (8, 4, "8 passed, 4 failed")
    assert int(report.exit_code) == 1
    lines = list(report.lines())
    assert lines[0] == "ok    decode-guard: ok [LF]"
    failure = lines.index("FAIL  decode-guard: wrong [LF]: the result differs from 'after'")
    assert lines[failure + 1:failure + 3] == ["    --- expected", "    +++ got"]
    data = json.loads(report.to_json())
    assert (data["patches"], data["passed"], data["failed"], data["inactive"]) == (str(folder), 8, 4, ["later-patch"])
    assert data["cases"][0] == {"subject": "decode-guard", "name": "ok", "check": "example", "variant": "LF",
                                "passed": True, "message": "", "diff": ""}
    clean = run_cases(folder, collect_cases(patch_set, ["decode-guard"])[:6])
    assert (clean.passed, clean.failed, int(clean.exit_code), clean.inactive) == (6, 0, 0, ())
    assert [name for name, status in clean.verdict.statuses] == [c.label for c in
                                                                 collect_cases(patch_set, ["decode-guard"])[:6]]


def test_rule_cases_come_only_with_the_whole_set_numbered_per_rule(tmp_path: Path) -> None:
    from patcher.checks import RULES, load_policy, policy_path

    folder = write_patch_set(tmp_path, {"decode-guard.toml": guard(example("ok", before=BEFORE, after=AFTER))})
    patch_set = load_patch_set(folder)
    every = collect_cases(patch_set)
    rules = [case for case in every if case.check in (Check.RULE_VALID, Check.RULE_INVALID)]
    expected = [(f"rule {rule}", f"{kind} {n}") for rule in load_policy(policy_path(folder)).rules
                for kind, listed in (("VALID", RULES[rule].VALID), ("INVALID", RULES[rule].INVALID))
                for n in range(1, len(listed) + 1)]
    assert [(case.subject, case.name) for case in rules] == expected and expected
    assert not any(case.check in (Check.RULE_VALID, Check.RULE_INVALID)
                   for case in collect_cases(patch_set, ["decode-guard"]))
    assert collect_cases(patch_set, ["decode-guard"], rules=False) == collect_cases(patch_set, rules=False)


def test_a_case_label_shows_the_check_only_for_round_trips_and_series() -> None:
    assert Case("p", "n", Check.EXAMPLE, "LF").label == "p: n [LF]"
    assert Case("p", "n", Check.RECOGNISED, "CRLF").label == "p: n [recognises its own result, CRLF]"
    assert Case("p", "n", Check.TWICE, "LF").label == "p: n [applying twice changes nothing, LF]"
    assert Case("series", "p: n", Check.SERIES).label == "series: p: n [every marker holds after the series]"
    assert Case("p", "examples", Check.NOT_WRITTEN).label == "p: examples"
    assert Case("rule r", "VALID 1", Check.RULE_VALID).label == "rule r: VALID 1"
    assert TestReport("d", ()).summary() == "0 passed, 0 failed"
