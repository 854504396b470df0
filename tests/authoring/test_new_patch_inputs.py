"""What ``patcher new`` accepts as an id, a target, a scope and ``--after``, and where the new line goes.

Each refusal is the whole line the author reads (exit 2, nothing
written): an id too long or not lower-case words joined by ``-``, a
target that is not a relative POSIX path to a ``.py`` file (empty, a
backslash, absolute, ``..``, another suffix, a control character or a
quote), a scope that is not a dotted name, an ``--after`` the series does
not list (naming what it does list, or that it lists nothing). The new
line goes at the end or right after ``--after`` (an inactive patch too),
and the written patch says where: its position once activated, the patch
it follows, its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.new import add_inactive_patch, check_id
from patcher.errors import PatcherError
from patcher.patchset.load import MAX_ID_LENGTH

from tests.fixtures_patches import one_error_line
from tests.patchset.test_markers_hold_after_series import threshold_patch

TARGET = "vllm/attention/ops/paged_attn.py"
SCOPE = "PagedAttention.forward_decode"
NOTE = "inactive until 'patcher test --activate {0}' passes"


def _refused(cli: Any, team: Path, *args: str) -> str:
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    line = one_error_line(cli("new", *args, "--patches", team))
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before
    return line


@pytest.mark.parametrize("patch_id", ["decode-fast-path", "v2", "a1-b2-c3", "a" * MAX_ID_LENGTH])
def test_an_id_of_lower_case_words_joined_by_dashes_is_accepted(patch_id: str) -> None:
    check_id(patch_id)


@pytest.mark.parametrize("patch_id", ["Decode", "decode_fast", "-decode", "decode-", "decode--fast", "1decode",
                                      "decode fast", "décode"])
def test_a_malformed_id_is_refused_with_the_form_it_must_have(patch_id: str) -> None:
    with pytest.raises(PatcherError) as refused:
        check_id(patch_id)
    assert str(refused.value) == (f"'{patch_id}' is not a patch id (use lower-case words joined by '-', starting "
                                  "with a letter, e.g. 'decode-fast-path')")


def test_new_refuses_a_malformed_id_in_one_line(cli: Any, team: Path) -> None:
    line = _refused(cli, team, "decode_fast", "--target", TARGET, "--scope", SCOPE)
    assert line == ("error: 'decode_fast' is not a patch id (use lower-case words joined by '-', starting with a "
                    "letter, e.g. 'decode-fast-path')")


def test_an_id_too_long_is_refused_saying_how_long_it_is(cli: Any, team: Path) -> None:
    long_id = "decode-" + "a" * MAX_ID_LENGTH
    line = _refused(cli, team, long_id, "--target", TARGET, "--scope", SCOPE)
    assert line == (f"error: '{long_id[:77]}...' is not a patch id: {len(long_id)} characters, more than "
                    f"{MAX_ID_LENGTH} (choose a shorter id, e.g. 'decode-fast-path')")


@pytest.mark.parametrize("target", ["", "vllm\\attention\\paged_attn.py", "/usr/lib/paged_attn.py",
                                    "vllm/../paged_attn.py", "vllm/paged_attn.pyc", "vllm/paged_attn",
                                    "vllm/paged\x01attn.py", 'vllm/"paged".py', "vllm/paged'attn.py"])
def test_a_target_that_is_not_a_relative_path_to_a_python_file_is_refused(cli: Any, team: Path, target: str) -> None:
    line = _refused(cli, team, "decode-fast-path", "--target", target, "--scope", SCOPE)
    assert line == (f"error: --target '{target}' is not a relative path to a .py file (give the path the image "
                    "runs the file at, e.g. vllm/attention/ops/paged_attn.py)")


@pytest.mark.parametrize("scope", ["", "PagedAttention.", ".forward_decode", "PagedAttention..forward_decode",
                                   "PagedAttention.forward-decode", "2PagedAttention", "PagedAttention forward"])
def test_a_scope_that_is_not_a_dotted_name_is_refused(cli: Any, team: Path, scope: str) -> None:
    line = _refused(cli, team, "decode-fast-path", "--target", TARGET, "--scope", scope)
    assert line == (f"error: --scope '{scope}' is not a qualified name (name the class and function the patch "
                    "rewrites, e.g. PagedAttention.forward_decode)")


@pytest.mark.parametrize("target, scope", [("paged_attn.py", "forward_decode"), (TARGET, "_PagedAttention._v2"),
                                           ("vllm/ops.v2/paged_attn.py", "A.b.c")])
def test_targets_and_scopes_of_every_allowed_form_are_written(cli: Any, team: Path, target: str, scope: str) -> None:
    result = cli("new", "decode-fast-path", "--target", target, "--scope", scope, "--patches", team)
    assert result.exit_code == 0, result.output
    text = (team / "decode-fast-path.toml").read_text(encoding="utf-8")
    assert f'target = "{target}"' in text and f'scope = "{scope}"' in text


def test_an_unknown_after_names_what_the_series_lists(cli: Any, team: Path) -> None:
    line = _refused(cli, team, "decode-fast-path", "--target", TARGET, "--scope", SCOPE, "--after", "three-tier")
    assert line == (f"error: {team / 'series'}: --after three-tier: no such patch in the series (the series has: "
                    "three-tier-decode, prefix-pregather, prefix-buffer-reuse)")
    (team / "series").write_text("# nothing yet\n")
    line = _refused(cli, team, "decode-fast-path", "--target", TARGET, "--scope", SCOPE, "--after", "three-tier")
    assert line.endswith("--after three-tier: no such patch in the series (the series has: none)")


def test_the_new_line_goes_last_or_after_the_patch_named_inactive_ones_too(team: Path) -> None:
    series = team / "series"
    series.write_text("# The shipped set\nthree-tier-decode.toml\n\nprefix-pregather.toml\n", encoding="utf-8")
    first = add_inactive_patch(team, "long-context-threshold", threshold_patch())
    assert (first.position, first.after, first.line) == (3, "prefix-pregather", 5)
    second = add_inactive_patch(team, "short-context-threshold",
                                threshold_patch(16384, patch_id="short-context-threshold"),
                                after="long-context-threshold")
    assert (second.position, second.after, second.line) == (3, "long-context-threshold", 6)
    third = add_inactive_patch(team, "mid-context-threshold", threshold_patch(24576, patch_id="mid-context-threshold"),
                               after="three-tier-decode")
    assert (third.position, third.after, third.line, third.patch_id) == (2, "three-tier-decode", 3,
                                                                          "mid-context-threshold")
    assert series.read_text(encoding="utf-8").splitlines() == [
        "# The shipped set", "three-tier-decode.toml", f"# mid-context-threshold.toml  # {NOTE.format('mid-context-threshold')}",
        "", "prefix-pregather.toml", f"# long-context-threshold.toml  # {NOTE.format('long-context-threshold')}",
        f"# short-context-threshold.toml  # {NOTE.format('short-context-threshold')}"]


def test_the_first_patch_of_an_empty_series_follows_nothing(team: Path) -> None:
    (team / "series").write_bytes(b"")
    written = add_inactive_patch(team, "long-context-threshold", threshold_patch())
    assert (written.position, written.after, written.line) == (1, None, 1)
    assert (team / "series").read_bytes() == f"# long-context-threshold.toml  # {NOTE.format('long-context-threshold')}\n".encode()


def test_add_inactive_patch_refuses_a_malformed_id_before_reading_anything(tmp_path: Path) -> None:
    with pytest.raises(PatcherError) as refused:
        add_inactive_patch(tmp_path / "missing", "Bad", threshold_patch())
    assert str(refused.value).startswith("'Bad' is not a patch id")
