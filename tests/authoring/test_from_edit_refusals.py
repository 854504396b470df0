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
             original_text: str = VENDOR_TEXT) -> str:
    team = copy_patch_set(tmp_path / "team")
    before = _snapshot(team)
    original = write(tmp_path / "orig.py", original_text)
    edited = write(tmp_path / "edited.py", edit(original_text))
    line = one_error_line(cli("new", "hand-edit", "--from-edit", vendor, original, edited, *extra, "--patches", team))
    assert _snapshot(team) == before  # nothing written, the series untouched
    assert not list(team.glob(".*"))  # no temporary left behind
    return line


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
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    assert line == (f"error: {original}: cannot turn the edit after line 166 of {original} (lines 167-172 of "
                    f"{edited}), in PagedAttention.forward_decode, into a step: the change is outside --scope "
                    "PagedAttention.forward_decode; nothing written (leave --scope out: this change is in "
                    "PagedAttention)")
    # The same edit without --scope is learned: the hint's way out works.
    team = copy_patch_set(tmp_path / "ok")
    original, edited = write(tmp_path / "o.py", VENDOR_TEXT), write(tmp_path / "e.py", add_helper_method(VENDOR_TEXT))
    assert cli("new", "helper", "--from-edit", VENDOR_ZIP, original, edited, "--patches", team).exit_code == 0


def test_a_scope_the_file_does_not_have_is_refused_naming_the_one_that_holds_the_change(
        cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, add_guard, "--scope", "PagedAttention.forward_decode_v2")
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    assert line == (f"error: {original}: cannot turn the edit at lines 193-196 of {original} (lines 193-199 of "
                    f"{edited}), in PagedAttention.forward_decode_v2, into a step: --scope "
                    "PagedAttention.forward_decode_v2: no class or function 'forward_decode_v2' in PagedAttention; "
                    "nothing written (leave --scope out: this change is in PagedAttention.forward_decode)")
    # Asked for, the scope that holds the change works, and so does a scope around it.
    for scope in ("PagedAttention.forward_decode", "PagedAttention"):
        team = copy_patch_set(tmp_path / scope)
        original, edited = write(tmp_path / "o.py", VENDOR_TEXT), write(tmp_path / "e.py", add_guard(VENDOR_TEXT))
        result = cli("new", "guard", "--from-edit", VENDOR_ZIP, original, edited, "--scope", scope, "--patches", team)
        assert result.exit_code == 0, result.output
        assert f'scope = "{scope}"' in (team / "guard.toml").read_text()


def test_code_holding_a_dollar_is_refused_and_the_hint_spelling_works(cli: Any, tmp_path: Path) -> None:
    line = _refused(cli, tmp_path, dollar_edit)
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    # Only the spelling is offered: a patch written by hand could not hold the '$' either.
    assert line == (f"error: {original}: cannot turn the edit after line 196 of {original} (line 197 of "
                    f"{edited}), in PagedAttention.forward_decode, into a step: the code holds '$', which patterns "
                    "and templates read as a metavariable; no step can write it; nothing written (spell it '\\x24' "
                    "inside the string (\"\\x245\" is \"$5\"), then run this again)")
    team = copy_patch_set(tmp_path / "ok")
    spelt = dollar_edit(VENDOR_TEXT).replace("$5", "\\x245")
    original, edited = write(tmp_path / "o.py", VENDOR_TEXT), write(tmp_path / "e.py", spelt)
    assert cli("new", "budget-log", "--from-edit", VENDOR_ZIP, original, edited, "--patches", team).exit_code == 0


def test_one_of_three_identical_runs_edited_is_refused_as_not_unique(cli: Any, vendor_copy: Path,
                                                                     tmp_path: Path) -> None:
    unrolled = with_unrolled_updates(VENDOR_TEXT)
    write(vendor_copy / SHIPPED, unrolled)
    line = _refused(cli, tmp_path, edit_middle_copy, vendor=vendor_copy, original_text=unrolled)
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    middle = _middle_copy_line(unrolled, "corr = torch.exp(m - m_new)")
    assert line == (f"error: {original}: cannot turn the edit at line {middle} of {original} (line {middle} of {edited}), in "
                    "_online_softmax_unrolled, into a step: 'corr = torch.exp(m - m_new)' is found 3 times in "
                    "_online_softmax_unrolled, and neither 3 statements on either side nor the statements around it "
                    "tell this place apart (a pattern must be unique in its scope); nothing written (make the same "
                    "edit in all 3 places (one step then rewrites them all), or write that step by hand: 'patcher "
                    "new hand-edit --target vllm/attention/ops/paged_attn.py --scope _online_softmax_unrolled' "
                    "starts the patch)")
    # Both ways out the hint names work on this very input.
    team = copy_patch_set(tmp_path / "ok")
    original, edited = write(tmp_path / "o.py", unrolled), write(tmp_path / "e.py", edit_every_copy(unrolled))
    result = cli("new", "clamp-corr", "--from-edit", vendor_copy, original, edited, "--patches", team)
    assert result.exit_code == 0, result.output
    assert "expect = 3" in (team / "clamp-corr.toml").read_text()
    by_hand = cli("new", "hand-edit", "--target", "vllm/attention/ops/paged_attn.py", "--scope",
                  "_online_softmax_unrolled", "--patches", team)
    assert by_hand.exit_code == 0, by_hand.output


def test_a_line_added_in_one_of_three_identical_runs_names_the_statements_around_it(
        cli: Any, vendor_copy: Path, tmp_path: Path) -> None:
    unrolled = with_unrolled_updates(VENDOR_TEXT)
    write(vendor_copy / SHIPPED, unrolled)
    line = _refused(cli, tmp_path, insert_in_middle_copy, vendor=vendor_copy, original_text=unrolled)
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    middle = _middle_copy_line(unrolled, "m.copy_(m_new)")
    # Nothing was removed: the statements on either side of the new line are what is not unique.
    assert line == (f"error: {original}: cannot turn the edit after line {middle} of {original} (line {middle + 1} "
                    f"of {edited}), "
                    "in _online_softmax_unrolled, into a step: 'm.copy_(m_new) / l.mul_(corr).add_(exp_s.sum(dim=-1))' "
                    "is found 3 times in _online_softmax_unrolled, and neither 3 statements on either side nor the "
                    "statements around it tell this place apart (a pattern must be unique in its scope); nothing "
                    "written (make the same edit in all 3 places (one step then rewrites them all), or write that "
                    "step by hand: 'patcher new hand-edit --target vllm/attention/ops/paged_attn.py --scope "
                    "_online_softmax_unrolled' starts the patch)")


def test_a_line_added_first_in_one_of_five_identical_loops_names_the_statement_after_it(
        cli: Any, tmp_path: Path) -> None:
    # Neither the loop nor the loops around it tell the third one apart.
    loop = "    for s in scores:\n        m_blk = s.amax(dim=-1)\n        m.copy_(m_blk)\n"
    five = "import torch\n\n\ndef online_max(scores, m):\n" + loop * 5 + "    return m\n"
    at = five.index(loop, five.index(loop, five.index(loop) + 1) + 1) + len("    for s in scores:\n")
    line = _refused_here(cli, tmp_path, five, five[:at] + "        s = s.float()\n" + five[at:])
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    assert line == (f"error: {original}: cannot turn the edit before line 12 of {original} (line 12 of {edited}), in "
                    "online_max, into a step: 'm_blk = s.amax(dim=-1)' is found 5 times in online_max, and neither 3 "
                    "statements on either side nor the statements around it tell this place apart (a pattern must be "
                    "unique in its scope); nothing written (make the same edit in all 5 places (one step then "
                    "rewrites them all), or write that step by hand: 'patcher new hand-edit --target "
                    "vllm/attention/ops/paged_attn.py --scope online_max' starts the patch)")


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
    original, edited = tmp_path / "orig.py", tmp_path / "edited.py"
    assert line == (f"error: {original}: cannot turn the edit before line 6 of {original} (line 5 of {edited}), in "
                    "PagedAttention, into a step: no step reproduces the edited code byte for byte: the operations "
                    "would put its comments or blank lines elsewhere; nothing written (keep the comments and blank "
                    "lines around the change as they were, or write that step by hand: 'patcher new hand-edit "
                    "--target vllm/attention/ops/paged_attn.py --scope PagedAttention' starts the patch)")
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
    team = copy_patch_set(tmp_path / "team")
    before = _snapshot(team)
    original, edited = write(tmp_path / "o.py", VENDOR_TEXT), write(tmp_path / "e.py", add_guard(VENDOR_TEXT))
    line = one_error_line(cli("new", patch_id, "--from-edit", VENDOR_ZIP, original, edited, "--patches", team))
    assert "already exists" in line or "is not a patch id" in line
    assert _snapshot(team) == before


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
