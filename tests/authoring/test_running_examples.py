"""``patcher test`` runs every example of a patch set: ``ok`` or ``FAIL`` a case, a diff of expected against got.

Each example runs in LF and CRLF, and the patch must recognise its own
result and change nothing when applied twice; an error example must fail
with its text, the closest code included. The set's own templates are
used, an example's ``params`` render the patch again, and ``--format
json`` gives every field.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from patcher.checks import load_policy

from tests.authoring.conftest import FIRST_EXAMPLE, decode_lines
from tests.fixtures_patches import edit_file, one_error_line
from tests.fixtures_vendor import PATCHES


def _test_after_edit(cli: Any, patches: Path, path: Path, old: str, new: str, *patch_ids: str, exit_code: int,
                     occurs: int = 1) -> list[str]:
    """Edit PATH (OLD to NEW), run 'patcher test PATCH_IDS' on PATCHES, check its exit code; return its stdout lines."""
    edit_file(path, old, new, occurs=occurs)
    result = cli("test", *patch_ids, "--patches", patches)
    assert result.exit_code == exit_code, result.output
    return result.stdout.splitlines()


def test_test_passes_every_case_of_the_bundled_set(cli: Any) -> None:
    result = cli("test", "--patches", PATCHES)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    cases, summary = lines[:-1], lines[-1]
    assert all(line.startswith("ok    ") for line in cases), [l for l in cases if not l.startswith("ok")]
    assert summary == f"{len(cases)} passed, 0 failed"
    assert f"ok    three-tier-decode: {FIRST_EXAMPLE} [CRLF]" in cases
    assert f"ok    three-tier-decode: {FIRST_EXAMPLE} [recognises its own result, LF]" in cases
    assert f"ok    three-tier-decode: {FIRST_EXAMPLE} [applying twice changes nothing, CRLF]" in cases
    for rule in load_policy(PATCHES / "policy.toml").rules:
        assert f"ok    rule {rule}: VALID 1" in cases and f"ok    rule {rule}: INVALID 1" in cases


def test_a_broken_example_fails_with_a_diff_of_expected_against_got(cli: Any, team: Path) -> None:
    # The comment the template writes says 8192; the first example now claims 9999.
    lines = _test_after_edit(cli, team, team / "three-tier-decode.toml", "# three-tier-decode): V1 up to 8192 tokens",
                             "# three-tier-decode): V1 up to 9999 tokens", exit_code=1, occurs=2)
    fail = f"FAIL  three-tier-decode: {FIRST_EXAMPLE} [LF]: the result differs from 'after'"
    assert fail in lines
    diff = lines[lines.index(fail) + 1 : lines.index(fail) + 12]
    assert diff[:2] == ["    --- expected", "    +++ got"]
    assert "    -        # three-tier-decode): V1 up to 9999 tokens, then V2, which" in diff
    assert "    +        # three-tier-decode): V1 up to 8192 tokens, then V2, which" in diff
    assert f"FAIL  three-tier-decode: {FIRST_EXAMPLE} [CRLF]: the result differs from 'after'" in lines
    # Only those two: the markers still recognise the (wrong) 'after', and the other patches pass.
    assert lines[-1].endswith(" passed, 2 failed")
    assert sum(line.startswith("FAIL") for line in lines) == 2


def test_a_difference_in_line_endings_alone_is_shown(cli: Any, team: Path) -> None:
    # 'after' loses its final newline: the same lines, so the diff names the endings.
    lines = _test_after_edit(cli, team, team / "three-tier-decode.toml",
                             "        return output\n'''\n\n[[examples]]\nname = \"upstream",
                             "        return output'''\n\n[[examples]]\nname = \"upstream", "three-tier-decode",
                             exit_code=1)
    assert "    -        return output" in lines
    assert "    +        return output\\n" in lines
    assert "    +        return output\\r\\n" in lines  # and in the CRLF variant


def test_an_error_example_that_no_longer_fails_as_expected_is_a_failure(cli: Any, team: Path) -> None:
    lines = _test_after_edit(cli, team, team / "prefix-buffer-reuse.toml",
                             "error = \"'m_new' escapes through an assignment\"", "error = \"'m_new' is never used\"",
                             "prefix-buffer-reuse", exit_code=1)
    fail = next(line for line in lines if line.startswith("FAIL") and "[LF]" in line)
    assert "expected an error containing \"'m_new' is never used\"" in fail
    assert "failed: step 1 (reuse-buffers): 'm_new' escapes through an assignment" in fail
    assert "    -fails with: ...'m_new' is never used..." in lines
    assert lines[-1] == "12 passed, 2 failed"


def test_json_output_gives_every_field_of_each_case(cli: Any, team: Path) -> None:
    edit_file(team / "three-tier-decode.toml", "# three-tier-decode): V1 up to 8192 tokens",
              "# three-tier-decode): V1 up to 9999 tokens", occurs=2)
    result = cli("test", "three-tier-decode", "--patches", team, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["patches"] == str(team)
    assert (report["passed"], report["failed"]) == (20, 2)
    assert len(report["cases"]) == 22
    assert {case["subject"] for case in report["cases"]} == {"three-tier-decode", "series"}  # named: no rule cases
    failed = [case for case in report["cases"] if not case["passed"]]
    assert [case["variant"] for case in failed] == ["LF", "CRLF"]
    first = failed[0]
    assert set(first) == {"subject", "name", "check", "variant", "passed", "message", "diff"}
    assert first["subject"] == "three-tier-decode"
    assert first["name"] == FIRST_EXAMPLE
    assert first["check"] == "example"
    assert first["message"] == "the result differs from 'after'"
    assert first["diff"].startswith("--- expected\n+++ got\n")
    assert "-        # three-tier-decode): V1 up to 9999 tokens" in first["diff"]
    passing = next(case for case in report["cases"] if case["check"] == "recognises its own result")
    assert passing["passed"] is True and passing["message"] == "" and passing["diff"] == ""


def test_an_unknown_patch_id_says_did_you_mean(cli: Any) -> None:
    result = cli("test", "three-tier", "--patches", PATCHES)
    line = one_error_line(result)
    assert "no patch 'three-tier' in the series" in line
    assert "did you mean 'three-tier-decode'?" in line
    assert result.stdout == ""


def test_a_patch_set_outside_the_repository_uses_its_own_templates(cli: Any, team: Path, tmp_path: Path) -> None:
    assert cli("test", "--patches", team).exit_code == 0
    # Templates may also live inside the patch set folder.
    inside = tmp_path / "inside"
    shutil.copytree(team, inside)
    shutil.copytree(team.parent / "templates", inside / "templates")
    # The examples still say "for good": failing them shows the set's own template was used.
    lines = _test_after_edit(cli, inside, inside / "templates" / "three-tier-decode" / "dispatch.py.j2",
                             "falls back to V1 for good", "falls back to V1 for ever", "three-tier-decode", exit_code=1)
    assert "    +        # falls back to V1 for ever if this build has no V2 kernel." in lines


def test_a_missing_template_is_a_patch_set_that_does_not_load(cli: Any, team: Path) -> None:
    (team.parent / "templates" / "three-tier-decode" / "dispatch.py.j2").unlink()
    result = cli("test", "--patches", team)
    line = one_error_line(result)
    assert "three-tier-decode.toml" in line and "no template 'three-tier-decode/dispatch.py.j2'" in line
    assert result.stdout == ""


def test_example_params_render_the_patch_again(cli: Any, team: Path) -> None:
    path = team / "three-tier-decode.toml"
    text = path.read_text(encoding="utf-8")
    example = text[text.index("[[examples]]"):text.index("[[examples]]", text.index("[[examples]]") + 1)]
    variant = (example.replace(FIRST_EXAMPLE, "small_max=4096 moves the V1 limit")
               .replace("name =", "params = { small_max = 4096 }\nname =", 1)
               .replace("V1 up to 8192 tokens", "V1 up to 4096 tokens")
               .replace("use_v2 = actual_max > 8192", "use_v2 = actual_max > 4096"))
    path.write_text(text + "\n" + variant, encoding="utf-8")
    result = cli("test", "three-tier-decode", "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert "ok    three-tier-decode: small_max=4096 moves the V1 limit [CRLF]" in result.stdout.splitlines()


def _drop_the_override_from_the_first_example(team: Path) -> tuple[int, int]:
    """Remove ``use_v1 = True`` from the first example's 'before'; return the lines of its dispatch there."""
    path = team / "three-tier-decode.toml"
    edit_file(path, "        use_v1 = True  # no V2 kernel on this card\n", "")
    before = path.read_text(encoding="utf-8").split("before = '''\n", 1)[1].split("'''", 1)[0]
    _, first, last = decode_lines(before)
    return first, last


def test_a_failing_example_shows_the_whole_message_with_the_closest_code(cli: Any, team: Path) -> None:
    first, last = _drop_the_override_from_the_first_example(team)
    result = cli("test", "three-tier-decode", "--patches", team)
    assert result.exit_code == 1
    closest = f"; closest: lines {first}-{last}, statement 2 differs: pattern 'use_v1 = True', code 'if use_v1: ...'"
    failures = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 4  # the example and applying it twice, LF and CRLF
    example = f"FAIL  three-tier-decode: {FIRST_EXAMPLE} [LF]: the patch failed: step 2 (replace): expected "
    assert failures[0].startswith(example) and failures[0].endswith(
        "found it 0 times in PagedAttention.forward_decode" + closest)
    twice = f"FAIL  three-tier-decode: {FIRST_EXAMPLE} [applying twice changes nothing, CRLF]: "
    assert failures[3].startswith(twice + "the first run did not apply: failed: step 2") and failures[3].endswith(closest)
    report = json.loads(cli("test", "three-tier-decode", "--patches", team, "--format", "json").stdout)
    assert [case["message"].endswith(closest) for case in report["cases"] if not case["passed"]] == [True] * 4


NO_OVERRIDE = "a vendor drop without the use_v1 = True override is not this patch's to rewrite"


def test_an_error_example_is_matched_against_the_closest_code_too(cli: Any, team: Path) -> None:
    # The example's code: the heuristic on line 9, the dispatch up to line 13, no override.
    path = team / "three-tier-decode.toml"
    closest = "closest: lines 9-13, statement 2 differs: pattern 'use_v1 = True', code 'if use_v1: ...'"
    lines = _test_after_edit(cli, team, path,
                             "error = \"step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True\"",
                             f'error = "{closest}"', "three-tier-decode", exit_code=0)
    assert f"ok    three-tier-decode: {NO_OVERRIDE} [CRLF]" in lines
    # A closest code that is not the one the patch names fails, showing the whole message.
    lines = _test_after_edit(cli, team, path, closest, closest.replace("statement 2", "statement 3"), "three-tier-decode",
                             exit_code=1)
    fail = next(line for line in lines if line.startswith(f"FAIL  three-tier-decode: {NO_OVERRIDE} [LF]"))
    assert f"expected an error containing {closest.replace('statement 2', 'statement 3')!r}" in fail
    assert fail.endswith(f"found it 0 times in PagedAttention.forward_decode; {closest}")
