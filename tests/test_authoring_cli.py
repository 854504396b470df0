"""The patch author's loop through the CLI: ``patcher new``, ``patcher test``, ``patcher explain``."""

from __future__ import annotations

import ast
import datetime
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from patcher.checks import load_policy
from patcher.patchset import load_patch_set

from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE, VENDOR_ZIP

TEMPLATES = ROOT / "templates"
FIRST_EXAMPLE = "the vendor's forced-V1 dispatch becomes three tiers"


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A copy of the patch set outside the repository, its templates beside it (the usual layout)."""
    shutil.copytree(PATCHES, tmp_path / "team" / "patches")
    shutil.copytree(TEMPLATES, tmp_path / "team" / "templates")
    return tmp_path / "team" / "patches"


def _edit(path: Path, old: str, new: str, occurs: int = 1) -> None:
    """Replace the first ``old`` in ``path``, checking it occurs ``occurs`` times (so the test edits what it means to)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == occurs, (old, text.count(old))
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _shipped_source() -> str:
    with zipfile.ZipFile(VENDOR_ZIP) as archive:
        name = next(n for n in archive.namelist() if n.endswith("/" + SHIPPED))
        return archive.read(name).decode("utf-8")


def _one_error_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


# --------------------------------------------------------------------------- patcher test


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
    _edit(team / "three-tier-decode.toml", "# three-tier-decode): V1 up to 8192 tokens",
          "# three-tier-decode): V1 up to 9999 tokens", occurs=2)
    result = cli("test", "--patches", team)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
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


def test_an_error_example_that_no_longer_fails_as_expected_is_a_failure(cli: Any, team: Path) -> None:
    _edit(team / "prefix-buffer-reuse.toml", "error = \"'m_new' escapes through an assignment\"",
          "error = \"'m_new' is never used\"")
    result = cli("test", "prefix-buffer-reuse", "--patches", team)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    fail = next(line for line in lines if line.startswith("FAIL") and "[LF]" in line)
    assert "expected an error containing \"'m_new' is never used\"" in fail
    assert "failed: step 1 (reuse-buffers): 'm_new' escapes through an assignment" in fail
    assert "    -fails with: ...'m_new' is never used..." in lines
    assert lines[-1] == "6 passed, 2 failed"


def test_json_output_field_by_field(cli: Any, team: Path) -> None:
    _edit(team / "three-tier-decode.toml", "# three-tier-decode): V1 up to 8192 tokens",
          "# three-tier-decode): V1 up to 9999 tokens", occurs=2)
    result = cli("test", "three-tier-decode", "--patches", team, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["patches"] == str(team)
    assert (report["passed"], report["failed"]) == (14, 2)
    assert len(report["cases"]) == 16
    assert {case["subject"] for case in report["cases"]} == {"three-tier-decode"}  # named: no rule cases
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
    line = _one_error_line(result)
    assert "no patch 'three-tier' in the series" in line
    assert "did you mean 'three-tier-decode'?" in line
    assert result.stdout == ""


def test_a_patch_set_outside_the_repository_uses_its_own_templates(cli: Any, team: Path, tmp_path: Path) -> None:
    assert cli("test", "--patches", team).exit_code == 0
    # Templates may also live inside the patch set folder.
    inside = tmp_path / "inside"
    shutil.copytree(team, inside)
    shutil.copytree(team.parent / "templates", inside / "templates")
    _edit(inside / "templates" / "three-tier-decode" / "dispatch.py.j2", "falls back to V1 for good",
          "falls back to V1 for ever")
    result = cli("test", "three-tier-decode", "--patches", inside)
    assert result.exit_code == 1  # the examples still say "for good": the set's own template was used
    assert "    +        # falls back to V1 for ever if this build has no V2 kernel." in result.stdout.splitlines()


def test_a_missing_template_is_a_patch_set_that_does_not_load(cli: Any, team: Path) -> None:
    (team.parent / "templates" / "three-tier-decode" / "dispatch.py.j2").unlink()
    result = cli("test", "--patches", team)
    line = _one_error_line(result)
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


# --------------------------------------------------------------------------- patcher new


def _new(cli: Any, team: Path, *args: str) -> Any:
    return cli("new", *args, "--target", "vllm/attention/ops/paged_attn.py",
               "--scope", "PagedAttention.forward_decode", "--patches", team)


def test_new_writes_a_loadable_patch_that_test_fails_until_its_example_is_written(cli: Any, team: Path) -> None:
    result = _new(cli, team, "decode-fast-path", "--after", "three-tier-decode")
    assert result.exit_code == 0, result.output
    assert "wrote " in result.stdout and "listed after three-tier-decode" in result.stdout
    names = [line for line in (team / "series").read_text().splitlines() if not line.startswith("#")]
    assert names == ["three-tier-decode.toml", "decode-fast-path.toml", "prefix-pregather.toml",
                     "prefix-buffer-reuse.toml"]
    patch = next(p for p in load_patch_set(team).patches if p.id == "decode-fast-path")
    assert patch.last_update == datetime.date.today().isoformat()
    assert (patch.target, patch.scope, len(patch.steps), patch.examples) == (
        "vllm/attention/ops/paged_attn.py", "PagedAttention.forward_decode", 1, ())
    assert patch.summary.startswith("Say in one line what decode-fast-path changes")
    text = patch.path.read_text()
    assert "# class PagedAttention:\n#     def forward_decode(self):" in text  # the example skeleton

    tested = cli("test", "--patches", team)
    assert tested.exit_code == 1
    failures = [line for line in tested.stdout.splitlines() if line.startswith("FAIL")]
    assert failures == ["FAIL  decode-fast-path: examples: patch decode-fast-path: example not written yet "
                        "(add an [[examples]] table with 'before' and 'after' or 'error' to decode-fast-path.toml)"]


def test_new_then_edit_then_test_passes(cli: Any, team: Path) -> None:
    assert _new(cli, team, "no-forced-v1").exit_code == 0
    path = team / "no-forced-v1.toml"
    _edit(path, 'pattern = "the_code_to_find()"\ncode = "the_code_that_replaces_it()"',
          'pattern = "use_v1 = True"\ncode = "use_v1 = max_seq_len <= 8192"')
    _edit(path, '# applied-when = ["the_new_code($X)"]', 'applied-when = ["use_v1 = max_seq_len <= 8192"]')
    path.write_text(path.read_text() + '''
[[examples]]
name = "the override goes"
before = \'\'\'
class PagedAttention:
    def forward_decode(self):
        use_v1 = True  # forced
\'\'\'
after = \'\'\'
class PagedAttention:
    def forward_decode(self):
        use_v1 = max_seq_len <= 8192  # forced
\'\'\'
''')
    result = cli("test", "no-forced-v1", "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "6 passed, 0 failed"


def test_new_keeps_the_series_line_endings_and_its_last_line(cli: Any, team: Path) -> None:
    # A series written on Windows, its last line without a newline.
    (team / "series").write_bytes(b"three-tier-decode.toml\r\nprefix-pregather.toml\r\nprefix-buffer-reuse.toml")
    assert _new(cli, team, "decode-fast-path").exit_code == 0
    assert (team / "series").read_bytes() == (b"three-tier-decode.toml\r\nprefix-pregather.toml\r\n"
                                              b"prefix-buffer-reuse.toml\r\ndecode-fast-path.toml\r\n")
    assert [p.id for p in load_patch_set(team).patches][-1] == "decode-fast-path"


@pytest.mark.parametrize("patch_id", ["three-tier-decode", "Decode-Fast", "decode_fast", "../escape", "x.toml", "x-", ""])
def test_new_refuses_an_existing_or_malformed_id_and_writes_nothing(cli: Any, team: Path, patch_id: str) -> None:
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    line = _one_error_line(_new(cli, team, patch_id))
    assert ("already exists" if patch_id == "three-tier-decode" else "is not a patch id") in line
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before


def test_new_refuses_an_unknown_after_a_missing_series_and_a_missing_folder(cli: Any, team: Path, tmp_path: Path) -> None:
    line = _one_error_line(_new(cli, team, "decode-fast-path", "--after", "three-tier"))
    assert "--after three-tier: no such patch in the series" in line and "three-tier-decode" in line
    assert not (team / "decode-fast-path.toml").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no 'series' file" in _one_error_line(_new(cli, empty, "decode-fast-path"))
    assert list(empty.iterdir()) == []
    assert "no such patch set folder" in _one_error_line(_new(cli, tmp_path / "missing", "decode-fast-path"))


def test_new_refuses_a_bad_target_or_scope(cli: Any, team: Path) -> None:
    line = _one_error_line(cli("new", "x", "--target", "/abs/paged_attn.py", "--scope", "A.b", "--patches", team))
    assert "not a relative path to a .py file" in line
    line = _one_error_line(cli("new", "x", "--target", "a.py", "--scope", "A.b()", "--patches", team))
    assert "is not a qualified name" in line


def test_new_uses_the_sets_own_template_strictly(cli: Any, team: Path) -> None:
    # A set may bring its own new-patch template; a variable nobody defines is an error, never "".
    own = team.parent / "templates" / "new-patch"
    own.mkdir(parents=True, exist_ok=True)
    (own / "patch.toml.j2").write_text('id = "{{ id }}"\nowner = "{{ owner }}"\n')
    series = (team / "series").read_bytes()
    line = _one_error_line(_new(cli, team, "decode-fast-path"))
    assert "undefined variable" in line and "'owner' is undefined" in line
    assert not (team / "decode-fast-path.toml").exists() and (team / "series").read_bytes() == series


def test_new_refuses_a_template_that_does_not_give_a_loadable_patch(cli: Any, team: Path) -> None:
    own = team.parent / "templates" / "new-patch"
    own.mkdir(parents=True, exist_ok=True)
    (own / "patch.toml.j2").write_text('id = "{{ id }}"\n')
    line = _one_error_line(_new(cli, team, "decode-fast-path"))
    assert "gives a patch that does not load" in line and "missing key 'description'" in line
    assert not (team / "decode-fast-path.toml").exists()


# --------------------------------------------------------------------------- patcher explain


def _decode_lines(source: str | None = None) -> tuple[int, int, int]:
    """Lines of the threshold assignment and of the use_v1 dispatch in the shipped file, found with ast."""
    tree = ast.parse(_shipped_source() if source is None else source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PagedAttention")
    threshold = next(n for n in cls.body if isinstance(n, ast.Assign)
                     and getattr(n.targets[0], "id", "") == "_PYTORCH_DECODE_THRESHOLD")
    decode = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward_decode")
    first = next(n for n in decode.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "use_v1")
    branch = next(n for n in decode.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "use_v1")
    assert branch.end_lineno is not None
    return threshold.lineno, first.lineno, branch.end_lineno


def test_explain_shows_header_parameters_and_steps(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch" in lines
    assert "Last-Update: 2026-11-29" in lines
    assert "  small_max (int, 1..32768) = 8192; default 8192" in lines
    assert "      Longest sequence, in tokens, that always decodes with the V1 kernel." in lines
    assert "  2. replace, in PagedAttention.forward_decode, each run of statements matching (expected once):" in lines
    assert "         use_v1 = $HEURISTIC" in lines
    assert "         use_v2 = actual_max > 8192 and not PagedAttention._v2_unavailable" in lines
    assert "In " not in result.stdout


def test_explain_set_changes_the_shown_value_and_the_rendered_code(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  small_max (int, 1..32768) = 4096  (set); default 8192" in lines
    assert "         use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in lines
    assert "Applied when: 'use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable'" in lines


def test_explain_in_the_fixture_zip_shows_line_ranges_and_captures(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", VENDOR_ZIP)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    threshold, first, last = _decode_lines()
    assert f"In {VENDOR_ZIP}:" in lines
    assert f"  shipped file: {SHIPPED}" in lines
    assert "  this patch: applies" in lines
    assert f"  step 1, pattern: line {threshold}" in lines
    assert "      $OLD = 32768" in lines
    assert f"  step 2, pattern: lines {first}-{last}" in lines
    assert ("      $HEURISTIC = (max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))"
            in lines)
    v1 = next(line for line in lines if line.startswith("      $...V1_ARGS = "))
    assert v1.endswith("= output, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, "
                       "block_size, max_seq_len, alibi_slopes")
    setup = lines.index(next(line for line in lines if line.startswith("      $...V2_SETUP = ")))
    assert "assert _PARTITION_SIZE % block_size == 0" in lines[setup + 1]


def test_explain_gives_line_numbers_of_the_shipped_file_after_earlier_patches(cli: Any) -> None:
    # prefix-buffer-reuse runs after two patches that add lines above its matches.
    result = cli("explain", "prefix-buffer-reuse", "--patches", PATCHES, "--in", VENDOR_TREE)
    assert result.exit_code == 0, result.output
    shipped = _shipped_source().splitlines()
    expected = [number for number, line in enumerate(shipped, 1) if line.strip() == "m_blk = s.amax(dim=-1)"]
    assert len(expected) == 2
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("  step 1, m_blk = ...")] == [
        f"  step 1, m_blk = ...: line {n}" for n in expected]
    assert any("three-tier-decode, prefix-pregather changed it; line numbers are the shipped file's" in line
               for line in lines)


def test_explain_in_an_applied_build_context_says_already_applied(cli: Any, tmp_path: Path) -> None:
    output = tmp_path / "context.tar.gz"
    assert cli("apply", VENDOR_ZIP, "-o", output, "--patches", PATCHES).exit_code == 0
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", output)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  this patch: already applied" in lines
    assert any(line.startswith("  step 2: pattern 'use_v1 = $HEURISTIC") and line.endswith(
        "matches nothing in PagedAttention.forward_decode") for line in lines)


def test_explain_an_unknown_patch_id_or_parameter(cli: Any) -> None:
    line = _one_error_line(cli("explain", "prefix-buffer", "--patches", PATCHES))
    assert "no patch 'prefix-buffer' in the series" in line and "did you mean 'prefix-buffer-reuse'?" in line
    line = _one_error_line(cli("explain", "three-tier-decode", "--patches", PATCHES, "--set", "three-tier-decode.small=1"))
    assert "has no parameter 'small'" in line


def test_a_difference_in_line_endings_alone_is_shown(cli: Any, team: Path) -> None:
    # 'after' loses its final newline: the same lines, so the diff names the endings.
    _edit(team / "three-tier-decode.toml", "        return output\n'''\n\n[[examples]]\nname = \"upstream",
          "        return output'''\n\n[[examples]]\nname = \"upstream")
    result = cli("test", "three-tier-decode", "--patches", team)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "    -        return output" in lines
    assert "    +        return output\\n" in lines
    assert "    +        return output\\r\\n" in lines  # and in the CRLF variant


def test_explain_in_a_drop_the_patch_does_not_fit_says_why(cli: Any, vendor_copy: Path) -> None:
    # A later vendor drop without the `use_v1 = True` override: step 2 finds nothing.
    shipped = vendor_copy / SHIPPED
    _edit(shipped, "        use_v1 = True  # BI-V100: the V2 kernel is not available\n", "")
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", vendor_copy)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    status = next(line for line in lines if line.startswith("  this patch: "))
    assert status.startswith("  this patch: fails: step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    assert "found it 0 times in PagedAttention.forward_decode" in status
    # The next line names the closest code, at the shipped file's lines: the heuristic up to the dispatch's end.
    _, first, last = _decode_lines(shipped.read_text(encoding="utf-8"))
    assert lines[lines.index(status) + 1] == (f"  closest: lines {first}-{last}, statement 2 differs: "
                                              "pattern 'use_v1 = True', code 'if use_v1: ...'")
    assert any(line.startswith("  step 1, pattern: line ") for line in lines)
    assert any(line.startswith("  step 2: pattern 'use_v1 = $HEURISTIC") and "matches nothing" in line
               for line in lines)


# --------------------------------------------------------------------------- rule examples, closest code


def test_a_rule_example_with_a_wrong_note_or_path_fails_in_patcher_test(
        cli: Any, team: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two examples a hurried rule author might write: the note of another rule's message, and
    # the finding placed in the file the code sits in rather than the one the rule reports.
    from patcher.checks import RULES
    from patcher.checks.base import Invalid, Valid

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


def _drop_the_override_from_the_first_example(team: Path) -> tuple[int, int]:
    """Remove ``use_v1 = True`` from the first example's 'before'; return the lines of its dispatch there."""
    path = team / "three-tier-decode.toml"
    _edit(path, "        use_v1 = True  # no V2 kernel on this card\n", "")
    before = path.read_text(encoding="utf-8").split("before = '''\n", 1)[1].split("'''", 1)[0]
    _, first, last = _decode_lines(before)
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
    _edit(path, "error = \"step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True\"", f'error = "{closest}"')
    result = cli("test", "three-tier-decode", "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert f"ok    three-tier-decode: {NO_OVERRIDE} [CRLF]" in result.stdout.splitlines()
    # A closest code that is not the one the patch names fails, showing the whole message.
    _edit(path, closest, closest.replace("statement 2", "statement 3"))
    result = cli("test", "three-tier-decode", "--patches", team)
    assert result.exit_code == 1
    fail = next(line for line in result.stdout.splitlines() if line.startswith(f"FAIL  three-tier-decode: {NO_OVERRIDE} [LF]"))
    assert f"expected an error containing {closest.replace('statement 2', 'statement 3')!r}" in fail
    assert fail.endswith(f"found it 0 times in PagedAttention.forward_decode; {closest}")


def test_explain_closest_code_of_a_later_patch_is_at_the_shipped_files_lines(cli: Any, vendor_copy: Path) -> None:
    # prefix-pregather runs after three-tier-decode, which adds lines above it; here its gather has another layout.
    shipped = vendor_copy / SHIPPED
    _edit(shipped, "k_tile = (key_cache[blk_ids]\n                                  .permute(0, 3, 1, 2, 4)",
          "k_tile = (key_cache[blk_ids]\n                                  .permute(0, 3, 2, 1, 4)")
    tree = ast.parse(shipped.read_text(encoding="utf-8"))
    gather = next(n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                  and getattr(n.targets[0], "id", "") == "k_tile" and "permute(0, 3, 2, 1, 4)" in ast.unparse(n))
    span = f"lines {gather.lineno}-{gather.end_lineno}"
    result = cli("explain", "prefix-pregather", "--patches", PATCHES, "--in", vendor_copy)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    closest = next(line for line in lines if line.startswith("  closest: "))
    assert closest.startswith(f"  closest: {span}, statement 1 differs: pattern 'k_tile = key_cache[blk_ids]"
                              ".permute(0, 3, 1, 2, 4)")
    assert closest.endswith("code 'k_tile = key_cache[blk_ids].permute(0, 3, 2, 1, 4).contiguous()"
                            ".view(-1, num_kv_heads, head_dim)'")
    # What 'diff --keep-going' says about the same drop names the same lines.
    diff = cli("diff", vendor_copy, "--patches", PATCHES, "--keep-going")
    assert f"; closest: {span}, statement 1 differs" in diff.stderr


# --------------------------------------------------------------------------- explain --format json


def test_explain_json_without_a_drop_field_by_field(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--format", "json",
                 "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"patch", "params", "steps", "in"}
    assert data["in"] is None
    header = data["patch"]
    assert header["id"] == "three-tier-decode"
    assert header["path"] == str(PATCHES / "three-tier-decode.toml")
    assert header["summary"] == "Decode in three tiers: V1, then V2 with a V1 fallback, then PyTorch"
    assert header["description"].startswith(header["summary"] + "\n\nThe vendor forces V1")
    assert header["origin"].startswith("other, patcher project")
    assert header["last_update"] == "2026-11-29"
    assert (header["target"], header["scope"]) == ("vllm/attention/ops/paged_attn.py", "PagedAttention.forward_decode")
    assert {"pattern": "use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable",
            "scope": "PagedAttention.forward_decode"} in header["applied_when"]
    assert {"pattern": "actual_max = $_", "scope": "PagedAttention.forward_decode"} in header["requires"]
    small, large = data["params"]
    assert small == {"name": "small_max", "type": "int", "default": 8192, "value": 4096, "set": True,
                     "help": "Longest sequence, in tokens, that always decodes with the V1 kernel.", "bounds": "1..32768"}
    assert (large["name"], large["value"], large["default"], large["set"]) == ("large_threshold", 32768, 32768, False)
    assert [step["number"] for step in data["steps"]] == [1, 2]
    step = data["steps"][1]
    assert (step["op"], step["scope"]) == ("replace", "PagedAttention.forward_decode")
    assert step["words"][0] == ("replace, in PagedAttention.forward_decode, each run of statements matching "
                                "(expected once):")
    assert "    use_v2 = actual_max > 4096 and not PagedAttention._v2_unavailable" in step["words"]
    assert [p["what"] for p in step["patterns"]] == ["pattern"]
    assert step["patterns"][0]["pattern"].splitlines()[:2] == ["use_v1 = $HEURISTIC", "use_v1 = True"]


def test_explain_json_in_a_drop_gives_file_scope_lines_and_captures(cli: Any) -> None:
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", VENDOR_ZIP, "--format", "json")
    assert result.exit_code == 0, result.output
    where = json.loads(result.stdout)["in"]
    threshold, first, last = _decode_lines()
    assert where["vendor"] == str(VENDOR_ZIP)
    assert where["shipped"] == SHIPPED
    assert where["scope"] == "PagedAttention.forward_decode"
    assert where["scope_lines"][0] < first and where["scope_lines"][1] >= last
    assert (where["earlier"], where["status"], where["detail"], where["diagnostic"]) == ([], "applies", "", None)
    assert where["unmatched"] == []
    one, two = where["matches"]
    assert one == {"step": 1, "file": SHIPPED, "scope": "PagedAttention", "what": "pattern",
                   "lines": [threshold, threshold], "captures": {"$OLD": "32768"}}
    assert (two["step"], two["file"], two["scope"], two["what"], two["lines"]) == (
        2, SHIPPED, "PagedAttention.forward_decode", "pattern", [first, last])
    assert set(two["captures"]) == {"$HEURISTIC", "$...V1_ARGS", "$...V2_SETUP", "$...V2_ARGS"}
    assert two["captures"]["$HEURISTIC"] == (
        "(max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))")
    assert two["captures"]["$...V1_ARGS"].startswith("output, query, key_cache, value_cache, num_kv_heads")


def test_explain_json_in_a_drop_the_patch_does_not_fit(cli: Any, vendor_copy: Path) -> None:
    shipped = vendor_copy / SHIPPED
    _edit(shipped, "        use_v1 = True  # BI-V100: the V2 kernel is not available\n", "")
    result = cli("explain", "three-tier-decode", "--patches", PATCHES, "--in", vendor_copy, "--format", "json")
    assert result.exit_code == 0, result.output
    where = json.loads(result.stdout)["in"]
    _, first, last = _decode_lines(shipped.read_text(encoding="utf-8"))
    assert where["status"] == "fails"
    assert where["detail"].startswith("step 2 (replace): expected 'use_v1 = $HEURISTIC / use_v1 = True")
    diagnostic = where["diagnostic"]
    assert (diagnostic["kind"], diagnostic["step"], diagnostic["scope"]) == ("step", 2, "PagedAttention.forward_decode")
    closest = diagnostic["closest"]
    assert (closest["first_line"], closest["last_line"], closest["statement"]) == (first, last, 2)
    assert (closest["pattern"], closest["code"]) == ("use_v1 = True", "if use_v1: ...")
    assert [m["step"] for m in where["matches"]] == [1]
    assert where["unmatched"][0].startswith("step 2: pattern 'use_v1 = $HEURISTIC")


# --------------------------------------------------------------------------- a broken installation


def test_new_without_its_bundled_template_fails_with_one_line(
        cli: Any, team: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An installation that lost templates/new-patch, and a patch set without its own copy.
    import patcher.resources

    installed = tmp_path / "installed"
    shutil.copytree(TEMPLATES, installed / "templates", ignore=shutil.ignore_patterns("new-patch"))
    monkeypatch.setattr(patcher.resources, "_CHECKOUT", installed)
    monkeypatch.setattr(patcher.resources, "_INSTALLED", tmp_path / "no-prefix")
    shutil.rmtree(team.parent / "templates" / "new-patch")
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    line = _one_error_line(_new(cli, team, "decode-fast-path"))
    assert line == (f"error: {installed / 'templates'}: patcher's own template new-patch/patch.toml.j2 is missing "
                    "(the installation is incomplete: reinstall patcher, or give this patch set its own "
                    f"template at {team.parent / 'templates' / 'new-patch' / 'patch.toml.j2'})")
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before
    # The hint works: with the set's own template in place, the same command succeeds.
    own = team.parent / "templates" / "new-patch"
    own.mkdir()
    shutil.copy(TEMPLATES / "new-patch" / "patch.toml.j2", own / "patch.toml.j2")
    assert _new(cli, team, "decode-fast-path").exit_code == 0
    assert (team / "decode-fast-path.toml").is_file()
