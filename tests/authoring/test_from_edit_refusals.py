"""An edit no step can say is refused with the smallest region that blocks it: exit 2, nothing written.

Each hostile edit is built by a function in ``tests/fixtures_edits.py``:
a comment-only edit (no marker could recognise it), a comment change at
the top of the file (outside every statement), an edit outside the scope
``--scope`` asks for, code holding '$', one of three identical copies of a
run changed (no pattern is unique), the stale root copy edited instead of
the shipped one, line endings converted, a syntax error. Every refusal is
one ``error:`` line naming the file and lines, its hint works, and the
patch folder is byte for byte as it was.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.fixtures_edits import (VENDOR_TEXT, add_guard, add_helper_method, comment_only_edit, crlf, dollar_edit,
                                  edit_every_copy, edit_middle_copy, header_comment_edit, insert_in_middle_copy,
                                  with_unrolled_updates, write)
from tests.fixtures_patches import copy_patch_set, one_error_line
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE, VENDOR_ZIP


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _refused(cli: Any, tmp_path: Path, edit: Callable[[str], str], *extra: str, vendor: Path = VENDOR_ZIP,
             original_text: str = VENDOR_TEXT, patch_id: str = "hand-edit") -> str:
    team = copy_patch_set(tmp_path / "team")
    before = _snapshot(team)
    original = write(tmp_path / "orig.py", original_text)
    edited = write(tmp_path / "edited.py", edit(original_text))
    line = one_error_line(cli("new", patch_id, "--from-edit", vendor, original, edited, *extra, "--patches", team))
    assert _snapshot(team) == before  # nothing written, the series untouched
    assert not list(team.glob(".*"))  # no temporary left behind
    return line


def _cannot_turn(tmp_path: Path, where: str, where_edited: str, scope: str, why: str, hint: str) -> str:
    """The error line for an edit at WHERE of orig.py (WHERE_EDITED of edited.py), in SCOPE, that no step can say."""
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    return (f"error: {original}: cannot turn the edit {where} of {original} ({where_edited} of {edited}), in {scope}, "
            f"into a step: {why}; nothing written ({hint})")


def _by_hand(scope: str) -> str:
    """The hint's way out that writes the step by hand in SCOPE."""
    return ("write that step by hand: 'patcher new hand-edit --target vllm/attention/ops/paged_attn.py --scope "
            f"{scope}' starts the patch")


def _not_unique(tmp_path: Path, where: str, where_edited: str, scope: str, statement: str, times: int) -> str:
    """The error line for an edit whose STATEMENT is found TIMES times in SCOPE, nothing around it telling it apart."""
    return _cannot_turn(tmp_path, where, where_edited, scope,
                        f"'{statement}' is found {times} times in {scope}, and neither 3 statements on either side "
                        "nor the statements around it tell this place apart (a pattern must be unique in its scope)",
                        f"make the same edit in all {times} places (one step then rewrites them all), or "
                        + _by_hand(scope))


def _learned(cli: Any, tmp_path: Path, folder: str, patch_id: str, original_text: str, edited_text: str, *extra: str,
             vendor: Path = VENDOR_ZIP) -> Path:
    """Learn ORIGINAL_TEXT -> EDITED_TEXT as PATCH_ID into a copy of the patch set in FOLDER; return its patches/."""
    team = copy_patch_set(tmp_path / folder)
    original, edited = write(tmp_path / "o.py", original_text), write(tmp_path / "e.py", edited_text)
    result = cli("new", patch_id, "--from-edit", vendor, original, edited, *extra, "--patches", team)
    assert result.exit_code == 0, result.output
    return team


def test_a_comment_only_edit_is_refused_naming_its_lines(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, comment_only_edit)
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    assert line == (f"error: {original}: the edit at lines 214-218 of {original} (lines 214-218 of {edited}) changes "
                    "only comments, blank lines or layout: patterns match on syntax, so no marker could tell a "
                    "patched file from the vendor's (a patch needs a change to the code itself; keep such notes in "
                    "the patch's description)")


def test_a_changed_file_header_is_refused(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, header_comment_edit)
    assert line == (f"error: {tmp_path / 'edited.py'}: the comments or blank lines at the top of the file changed: "
                    "patterns match statements, so no step can say it (leave the comments outside classes and "
                    "functions as they were)")


def test_an_edit_outside_the_scope_asked_for_is_refused_naming_it(cli: Any, tmp_path: Path) -> None:
    # add_helper_method edits the class and forward_prefix: neither is in forward_decode.
    line = _refused(cli, tmp_path, add_helper_method, "--scope", "PagedAttention.forward_decode")
    assert line == _cannot_turn(tmp_path, "after line 166", "lines 167-172", "PagedAttention.forward_decode",
                                "the change is outside --scope PagedAttention.forward_decode",
                                "leave --scope out: this change is in PagedAttention")
    # The same edit without --scope is learned: the hint's way out works.
    _learned(cli, tmp_path, "ok", "helper", VENDOR_TEXT, add_helper_method(VENDOR_TEXT))


def test_a_scope_the_file_does_not_have_is_refused_naming_the_one_that_holds_the_change(
        cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, add_guard, "--scope", "PagedAttention.forward_decode_v2")
    assert line == _cannot_turn(tmp_path, "at lines 193-196", "lines 193-199", "PagedAttention.forward_decode_v2",
                                "--scope PagedAttention.forward_decode_v2: no class or function 'forward_decode_v2' "
                                "in PagedAttention",
                                "leave --scope out: this change is in PagedAttention.forward_decode")
    # Asked for, the scope that holds the change works, and so does a scope around it.
    for scope in ("PagedAttention.forward_decode", "PagedAttention"):
        team = _learned(cli, tmp_path, scope, "guard", VENDOR_TEXT, add_guard(VENDOR_TEXT), "--scope", scope)
        assert f'scope = "{scope}"' in (team / "guard.toml").read_text()


def test_code_holding_a_dollar_is_refused_and_the_hint_spelling_works(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, dollar_edit)
    # Only the spelling is offered: a patch written by hand could not hold the '$' either.
    assert line == _cannot_turn(tmp_path, "after line 196", "line 197", "PagedAttention.forward_decode",
                                "the code holds '$', which patterns and templates read as a metavariable; no step "
                                "can write it",
                                "spell it '\\x24' inside the string (\"\\x245\" is \"$5\"), then run this again")
    _learned(cli, tmp_path, "ok", "budget-log", VENDOR_TEXT, dollar_edit(VENDOR_TEXT).replace("$5", "\\x245"))


def test_one_of_three_identical_runs_edited_is_refused_as_not_unique(cli: Any, vendor_copy: Path,
                                                                     tmp_path: Path) -> None:
    line, unrolled = _refused_in_three_runs(cli, tmp_path, vendor_copy, edit_middle_copy)
    middle = _middle_copy_line(unrolled, "corr = torch.exp(m - m_new)")
    assert line == _not_unique(tmp_path, f"at line {middle}", f"line {middle}", "_online_softmax_unrolled",
                               "corr = torch.exp(m - m_new)", 3)
    # Both ways out the hint names work on this very input.
    team = _learned(cli, tmp_path, "ok", "clamp-corr", unrolled, edit_every_copy(unrolled), vendor=vendor_copy)
    assert "expect = 3" in (team / "clamp-corr.toml").read_text()
    by_hand = cli("new", "hand-edit", "--target", "vllm/attention/ops/paged_attn.py", "--scope",
                  "_online_softmax_unrolled", "--patches", team)
    assert by_hand.exit_code == 0, by_hand.output


def test_a_line_added_in_one_of_three_identical_runs_names_the_statements_around_it(
        cli: Any, vendor_copy: Path, tmp_path: Path) -> None:
    line, unrolled = _refused_in_three_runs(cli, tmp_path, vendor_copy, insert_in_middle_copy)
    middle = _middle_copy_line(unrolled, "m.copy_(m_new)")
    # Nothing was removed: the statements on either side of the new line are what is not unique.
    assert line == _not_unique(tmp_path, f"after line {middle}", f"line {middle + 1}", "_online_softmax_unrolled",
                               "m.copy_(m_new) / l.mul_(corr).add_(exp_s.sum(dim=-1))", 3)


def test_a_line_added_first_in_one_of_five_identical_loops_names_the_statement_after_it(
        cli: Any, tmp_path: Path) -> None:
    # Neither the loop nor the loops around it tell the third one apart.
    loop = "    for s in scores:\n        m_blk = s.amax(dim=-1)\n        m.copy_(m_blk)\n"
    five = "import torch\n\n\ndef online_max(scores, m):\n" + loop * 5 + "    return m\n"
    at = five.index(loop, five.index(loop, five.index(loop) + 1) + 1) + len("    for s in scores:\n")
    line = _refused_here(cli, tmp_path, five, five[:at] + "        s = s.float()\n" + five[at:])
    assert line == _not_unique(tmp_path, "before line 12", "line 12", "online_max", "m_blk = s.amax(dim=-1)", 5)


def test_an_edit_that_leaves_nothing_to_recognise_it_by_is_refused(cli: Any, tmp_path: Path) -> None:
    # The last 'del' of both online-softmax loops deleted: one step for both places, but what now ends each
    # loop is told apart only by its loop's header, so no one pattern is found twice.
    line = _refused(cli, tmp_path, lambda text: text.replace(" " * 24 + "del exp_s, v_t, corr\n", "").replace(
        " " * 20 + "del exp_s, v_t, corr\n", ""))
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    first = VENDOR_TEXT.splitlines().index("                        del exp_s, v_t, corr") + 1
    assert line == (f"error: {original}: the edit at line {first} of {original} (removed in {edited}) leaves no "
                    "statement that is new and as frequent as the step writes it, so re-applying could not tell the "
                    "patch is there (add a statement of its own to the edit (a distinct assignment), or write the "
                    "patch by hand with 'patcher new hand-edit --target vllm/attention/ops/paged_attn.py --scope "
                    "PagedAttention._forward_prefix_pytorch')")


def test_a_blank_line_moved_by_the_edit_is_refused_and_keeping_it_works(cli: Any, tmp_path: Path) -> None:
    # A class attribute added above the first method, the blank line below the class line moved under it:
    # an insert keeps the blank line above the new code, so no step gives these bytes.
    decode = "import torch\n\n\nclass PagedAttention:\n\n    @staticmethod\n    def forward_decode(query):\n" \
             "        return query\n"
    line = _refused_here(cli, tmp_path, decode, decode.replace("class PagedAttention:\n\n",
                                                                "class PagedAttention:\n    _V2 = None\n\n"))
    assert line == _cannot_turn(tmp_path, "before line 6", "line 5", "PagedAttention",
                                "no step reproduces the edited code byte for byte: the operations would put its "
                                "comments or blank lines elsewhere",
                                "keep the comments and blank lines around the change as they were, or "
                                + _by_hand("PagedAttention"))
    from patcher.authoring.from_edit import learn_patch

    kept = decode.replace("class PagedAttention:\n\n", "class PagedAttention:\n\n    _V2 = None\n\n")
    learned = learn_patch("v2-flag", decode.encode(), kept.encode(), target="vllm/attention/ops/paged_attn.py",
                          shipped=SHIPPED)
    assert [(s.op, s.position, s.pattern) for s in learned.steps] == [
        ("insert", "before", "@staticmethod\ndef forward_decode(query):\n    $...\n")]


def _middle_copy_line(text: str, statement: str) -> int:
    """The line of STATEMENT in the middle copy of ``with_unrolled_updates``' helper."""
    tree = ast.parse(text)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_online_softmax_unrolled")
    found = [n.lineno for n in helper.body if ast.unparse(n) == statement]
    assert len(found) == 3
    return found[1]


def _refused_in_three_runs(cli: Any, tmp_path: Path, vendor_copy: Path,
                           edit: Callable[[str], str]) -> tuple[str, str]:
    """Refuse EDIT of a vendor copy whose shipped file has three identical runs; return the line and that text."""
    unrolled = with_unrolled_updates(VENDOR_TEXT)
    write(vendor_copy / SHIPPED, unrolled)
    return _refused(cli, tmp_path, edit, vendor=vendor_copy, original_text=unrolled), unrolled


def _refused_here(cli: Any, tmp_path: Path, original_text: str, edited_text: str) -> str:
    """Refuse ORIGINAL_TEXT -> EDITED_TEXT as the shipped paged_attn.py of a copy of the vendor tree."""
    vendor = tmp_path / "vendor"
    shutil.copytree(VENDOR_TREE, vendor)
    write(vendor / SHIPPED, original_text)
    return _refused(cli, tmp_path, lambda _: edited_text, vendor=vendor, original_text=original_text)


def test_the_stale_root_copy_is_refused_naming_the_shipped_one(cli: Any, tmp_path: Path) -> None:
    root_copy = (VENDOR_TREE / "paged_attn.py").read_bytes().decode("utf-8")  # CRLF, as the drop has it
    line = _refused(cli, tmp_path, lambda text: text.replace("import torch", "import torch, os", 1),
                    original_text=root_copy)
    assert "which the image never ships; it ships qwen3_6_scripts/paged_attn.py" in line
    assert f"edit a copy of {SHIPPED} instead" in line


def test_converted_line_endings_are_refused_with_a_hint(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, lambda text: crlf(add_guard(text)))
    assert "has CRLF line endings and" in line and "convert" in line


def test_an_edited_file_that_does_not_parse_is_refused(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, lambda text: text.replace("        return output\n", "        return output)\n", 1))
    assert f"{tmp_path / 'edited.py'}: does not parse: line " in line


@pytest.mark.parametrize("patch_id", ["three-tier-decode", "Bad_Id"])
def test_an_existing_or_malformed_id_is_refused(cli: Any, tmp_path: Path, patch_id: str) -> None:
    line = _refused(cli, tmp_path, add_guard, patch_id=patch_id)
    assert "already exists" in line or "is not a patch id" in line


def test_wrong_arguments_are_usage_errors(cli: Any, tmp_path: Path) -> None:
    team = copy_patch_set(tmp_path / "team")
    usage = ("Error: --from-edit takes VENDOR ORIGINAL EDITED, or VENDOR EDITED_TREE "
             "(--target only with ORIGINAL EDITED).\n")
    result = cli("new", "x", "--from-edit", VENDOR_ZIP, "--patches", team)
    assert result.exit_code == 2 and result.stderr.endswith(usage)
    # An edited tree names its targets itself: --target is for one ORIGINAL EDITED pair.
    result = cli("new", "x", "--from-edit", VENDOR_ZIP, tmp_path, "--target", SHIPPED, "--patches", team)
    assert result.exit_code == 2 and result.stderr.endswith(usage)
    result = cli("new", "x", "--patches", team)
    assert result.exit_code == 2 and "Missing option '--target'" in result.stderr
    shutil.rmtree(team)


@pytest.mark.parametrize("problem", ["!applied to ORIGINAL it gives other bytes than EDITED",
                                     "its example: the pattern is not found"])
def test_a_learned_patch_that_fails_its_own_check_names_the_whole_command_to_write_it_by_hand(
        monkeypatch: pytest.MonkeyPatch, problem: str) -> None:
    # The learned patch is checked as 'patcher test' would; whether it does not reproduce the edit ('!')
    # or fails otherwise, the hint is a command that starts that patch, id, target and scope filled in.
    from patcher.authoring import from_edit

    monkeypatch.setattr(from_edit, "_check_patch", lambda *args: problem)
    with pytest.raises(from_edit.EditRefused) as refused:
        from_edit.learn_patch("guarded", VENDOR_TEXT.encode(), add_guard(VENDOR_TEXT).encode(),
                              target="vllm/attention/ops/paged_attn.py", shipped=SHIPPED)
    assert refused.value.hint == ("write this patch by hand with 'patcher new guarded --target "
                                  "vllm/attention/ops/paged_attn.py --scope PagedAttention.forward_decode'")
