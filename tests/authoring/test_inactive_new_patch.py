"""A new patch is inactive until ``patcher test --activate ID`` passes: listed commented out, with a note saying so.

``patcher new`` (and ``add_inactive_patch``, which ``new --from-edit``
calls too) lists the patch as
``# ID.toml  # inactive until 'patcher test --activate ID' passes``: every
command reads that as a comment, so ``apply`` and ``diff`` leave the patch
out and say nothing about it. ``patcher test`` leaves it out too, with a
note on stderr; ``patcher test ID`` runs its cases in its place in the
series; ``patcher test --activate ID`` uncomments the line, keeping the
series' mode and line endings, only when every case passes (the series
cases included), and writes nothing otherwise. Should another edit of the
series list the patch, or take its line out, while the cases run, it
refuses them all and writes nothing, with a hint that works for each.
A patch commented out by hand, without the note, is not inactive: it is
simply not in the series.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.new import add_inactive_patch
from patcher.authoring.series_file import activate
from patcher.errors import PatcherError
from patcher.patchset import load_patch_set

from tests.authoring.conftest import FIRST_EXAMPLE
from tests.fixtures_cli import GOLDEN, tar_files
from tests.fixtures_patches import edit_file, fill_in_length_check, one_error_line
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP
from tests.patchset.test_markers_hold_after_series import threshold_patch

ID = "decode-length-check"
NOTE = f"# {ID}.toml  # inactive until 'patcher test --activate {ID}' passes"
SHIPPED_IDS = ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]


def new(cli: Any, team: Path, *args: str) -> Any:
    """Run ``patcher new ID`` for forward_decode in TEAM."""
    return cli("new", ID, "--target", "vllm/attention/ops/paged_attn.py",
               "--scope", "PagedAttention.forward_decode", "--patches", team, *args)


def write_length_check(team: Path) -> None:
    """Fill in the new patch as its author would: one insert step, its marker, and an example that passes."""
    fill_in_length_check(team / f"{ID}.toml")


def active_ids(team: Path) -> list[str]:
    """The ids every command loads from TEAM's series."""
    return [p.id for p in load_patch_set(team).patches]


def test_new_lists_the_patch_commented_out_with_a_note(cli: Any, team: Path) -> None:
    result = new(cli, team, "--after", "three-tier-decode")
    assert result.exit_code == 0, result.output
    assert "listed after three-tier-decode" in result.stdout and "inactive" in result.stdout
    lines = (team / "series").read_text().splitlines()
    assert lines[1:] == ["three-tier-decode.toml", NOTE, "prefix-pregather.toml", "prefix-buffer-reuse.toml"]
    assert active_ids(team) == SHIPPED_IDS
    assert new(cli, team).exit_code == 2  # an inactive patch's id is taken too


def test_apply_leaves_an_inactive_patch_out_and_says_nothing_about_it(cli: Any, team: Path, tmp_path: Path) -> None:
    assert new(cli, team).exit_code == 0
    write_length_check(team)  # a patch that would apply: inactive, it still must not
    output = tmp_path / "ctx.tar.gz"
    result = cli("apply", VENDOR_ZIP, "-o", output, "--patches", team)
    assert result.exit_code == 0, result.stderr
    assert ID not in result.stderr and "error" not in result.stderr
    assert tar_files(output)[SHIPPED][1] == GOLDEN.read_bytes()


def test_test_leaves_inactive_patches_out_with_a_note(cli: Any, team: Path) -> None:
    assert new(cli, team).exit_code == 0
    result = cli("test", "--patches", team)
    assert result.exit_code == 0, result.stdout  # its missing example does not fail the set
    assert ID not in result.stdout
    assert result.stderr.splitlines() == [f"note: 1 inactive patch(es) not tested: {ID} (apply leaves them out; "
                                          f"'patcher test {ID}' runs its cases)"]
    report = json.loads(cli("test", "--patches", team, "--format", "json").stdout)
    assert report["inactive"] == [ID] and report["failed"] == 0


def test_test_id_runs_an_inactive_patchs_cases_in_its_place(cli: Any, team: Path) -> None:
    assert new(cli, team).exit_code == 0
    result = cli("test", ID, "--patches", team)
    assert result.exit_code == 1
    assert f"FAIL  {ID}: examples: patch {ID}: example not written yet" in result.stdout
    assert result.stderr.splitlines() == [f"note: {ID} is inactive: apply leaves it out until "
                                          f"'patcher test --activate {ID}' passes"]
    write_length_check(team)
    result = cli("test", ID, "--patches", team)
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert f"ok    {ID}: a negative length stops decode [CRLF]" in lines
    # In its place in the series: it runs after three-tier-decode on that patch's examples.
    assert f"ok    series: three-tier-decode: {FIRST_EXAMPLE} [every marker holds after the series]" in lines
    assert active_ids(team) == SHIPPED_IDS  # testing activates nothing


def test_activate_refuses_while_a_case_fails_and_writes_nothing(cli: Any, team: Path) -> None:
    assert new(cli, team).exit_code == 0
    series = (team / "series").read_bytes()
    result = cli("test", "--activate", ID, "--patches", team)
    assert result.exit_code == 1
    assert f"not activated: {ID} (1 case(s) failed; the series is unchanged)" in result.stderr
    assert (team / "series").read_bytes() == series


def test_activate_lists_the_patch_once_every_case_passes_keeping_the_series_file(cli: Any, team: Path,
                                                                                   tmp_path: Path) -> None:
    # A series written on Windows, group-readable only.
    series = team / "series"
    series.write_bytes(series.read_bytes().replace(b"\n", b"\r\n"))
    os.chmod(series, 0o640)
    assert new(cli, team, "--after", "three-tier-decode").exit_code == 0
    write_length_check(team)
    inactive = series.read_bytes()
    assert f"\r\n{NOTE}\r\n".encode() in inactive
    result = cli("test", "--activate", ID, "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert result.stderr.splitlines() == [f"activated {ID}: {series} lists it as patch 2"]
    assert series.read_bytes() == inactive.replace(NOTE.encode(), f"{ID}.toml".encode())
    assert stat.S_IMODE(os.stat(series).st_mode) == 0o640
    assert active_ids(team) == ["three-tier-decode", ID, "prefix-pregather", "prefix-buffer-reuse"]
    applied = cli("apply", VENDOR_ZIP, "-o", tmp_path / "ctx.zip", "--patches", team)
    assert applied.exit_code == 0, applied.stderr
    assert f"applied          {ID}" in applied.stderr
    assert "4 applied, 0 already applied, 0 failed" in applied.stderr


def test_activate_refuses_a_patch_that_breaks_an_earlier_patchs_marker(cli: Any, team: Path) -> None:
    # The patch passes every case of its own; only the series cases show what it breaks.
    add_inactive_patch(team, "long-context-threshold", threshold_patch(49152))
    series = (team / "series").read_bytes()
    result = cli("test", "--activate", "long-context-threshold", "--patches", team)
    assert result.exit_code == 1
    fails = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert fails and all(line.startswith("FAIL  series: three-tier-decode: ") and
                         "patch long-context-threshold: rewrites '_PYTORCH_DECODE_THRESHOLD = 32768'" in line
                         for line in fails)
    assert "not activated: long-context-threshold" in result.stderr
    assert (team / "series").read_bytes() == series


def test_activate_without_an_id_is_refused_with_a_hint_that_works(cli: Any, team: Path) -> None:
    assert new(cli, team).exit_code == 0
    write_length_check(team)
    line = one_error_line(cli("test", "--activate", "--patches", team))
    assert line == f"error: --activate needs the inactive patches to activate, by id (e.g. 'patcher test --activate {ID}')"
    assert cli("test", "--activate", ID, "--patches", team).exit_code == 0
    assert ID in active_ids(team)


def test_activate_an_active_patch_says_so_and_writes_nothing(cli: Any, team: Path) -> None:
    series = (team / "series").read_bytes()
    result = cli("test", "--activate", "prefix-buffer-reuse", "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert result.stderr.splitlines() == ["note: prefix-buffer-reuse is already active"]
    assert (team / "series").read_bytes() == series


# Another edit of the series while the cases ran: the line uncommented by hand, or taken out.
EDITED_MEANWHILE = {
    "already active": (f"{ID}.toml", "another edit of the series listed it meanwhile: nothing left to activate"),
    "not in the series": ("", f"list {ID}.toml in the series by hand"),
}


@pytest.mark.parametrize("state", sorted(EDITED_MEANWHILE))
def test_activate_refuses_a_patch_whose_line_another_edit_changed_and_writes_nothing(
        cli: Any, team: Path, monkeypatch: pytest.MonkeyPatch, state: str) -> None:
    assert new(cli, team, "--after", "three-tier-decode").exit_code == 0
    write_length_check(team)
    line, hint = EDITED_MEANWHILE[state]
    import patcher.authoring.cases as cases

    run_cases = cases.run_cases

    def edited_meanwhile(*args: Any, **kwargs: Any) -> Any:
        edit_file(team / "series", NOTE + "\n", line + "\n" if line else "")
        return run_cases(*args, **kwargs)

    monkeypatch.setattr(cases, "run_cases", edited_meanwhile)
    result = cli("test", "--activate", ID, "--patches", team)
    monkeypatch.undo()
    edited = (team / "series").read_bytes()
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (f"error: {team / 'series'}: cannot activate '{ID}': it is {state} "
                                              f"({hint})")
    assert (team / "series").read_bytes() == edited  # as the other edit left it
    if state == "not in the series":  # the hint works
        with open(team / "series", "a", encoding="utf-8") as series:
            series.write(f"{ID}.toml\n")
    assert ID in active_ids(team)


def test_activate_of_several_refuses_them_all_naming_the_others_when_one_was_listed_meanwhile(
        cli: Any, team: Path) -> None:
    assert new(cli, team).exit_code == 0
    add_inactive_patch(team, "long-context-threshold", threshold_patch())
    edit_file(team / "series", NOTE, f"{ID}.toml")  # listed by hand while the cases ran
    series = (team / "series").read_bytes()
    with pytest.raises(PatcherError) as refused:
        activate(team, [ID, "long-context-threshold"])
    assert refused.value.message == f"cannot activate '{ID}': it is already active"
    assert refused.value.hint == ("another edit of the series listed it meanwhile: activate the others with "
                                  "'patcher test --activate long-context-threshold'")
    assert (team / "series").read_bytes() == series


@pytest.mark.parametrize("line", ["# prefix-buffer-reuse.toml", "# prefix-buffer-reuse.toml  # broken on 0.6.4",
                                  "#prefix-buffer-reuse.toml # see inactive patches below"])
def test_a_patch_commented_out_by_hand_is_not_inactive(cli: Any, team: Path, line: str) -> None:
    # Only patcher's own note ('# inactive ...') makes a commented line an inactive patch.
    edit_file(team / "series", "prefix-buffer-reuse.toml", line)
    assert active_ids(team) == SHIPPED_IDS[:2]
    result = cli("test", "--patches", team)
    assert result.exit_code == 0 and result.stderr == ""
    assert "no patch 'prefix-buffer-reuse' in the series" in one_error_line(cli("test", "prefix-buffer-reuse",
                                                                                "--patches", team))


def test_a_series_with_only_inactive_patches_names_them(cli: Any, team: Path) -> None:
    # A team starting its own set: an empty series, then its first patch.
    (team / "series").write_text("")
    assert new(cli, team).exit_code == 0
    line = one_error_line(cli("test", "--patches", team))
    assert line == (f"error: {team / 'series'}: the series lists no active patch, only inactive ones ({ID}) "
                    f"(test one with 'patcher test {ID}')")
    write_length_check(team)
    assert cli("test", ID, "--patches", team).exit_code == 0  # the hint works
    assert cli("test", "--activate", ID, "--patches", team).exit_code == 0
    assert (team / "series").read_text() == f"{ID}.toml\n"


def test_add_inactive_patch_writes_the_file_and_its_line_and_refuses_what_would_not_load(team: Path) -> None:
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    wrong = threshold_patch().replace('id = "long-context-threshold"', 'id = "other-id"')
    with pytest.raises(PatcherError, match="does not load: .*does not match the file name"):
        add_inactive_patch(team, "long-context-threshold", wrong)
    with pytest.raises(PatcherError, match="--after nothing: no such patch in the series"):
        add_inactive_patch(team, "long-context-threshold", threshold_patch(), after="nothing")
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before
    written = add_inactive_patch(team, "long-context-threshold", threshold_patch(), after="three-tier-decode")
    assert (written.path, written.series, written.position, written.after, written.line) == (
        team / "long-context-threshold.toml", team / "series", 2, "three-tier-decode", 3)
    assert written.path.read_text(encoding="utf-8") == threshold_patch()
    assert (team / "series").read_text().splitlines()[2] == (
        "# long-context-threshold.toml  # inactive until 'patcher test --activate long-context-threshold' passes")
    with pytest.raises(PatcherError, match="already exists"):
        add_inactive_patch(team, "long-context-threshold", threshold_patch())


def escaping_inactive_line(team: Path) -> Path:
    """Make TEAM's series name, as an inactive patch, a file outside the set that would load; return that file."""
    outside = team.parent / "outside.toml"
    outside.write_text(threshold_patch(patch_id="outside"), encoding="utf-8")
    with open(team / "series", "a", encoding="utf-8") as series:
        series.write("# ../outside.toml  # inactive until 'patcher test --activate outside' passes\n")
    return outside


def test_an_inactive_line_leading_out_of_the_set_is_refused(cli: Any, team: Path) -> None:
    outside = escaping_inactive_line(team)
    series = (team / "series").read_bytes()
    for args in (("test", "outside"), ("test", "--activate", "outside")):
        line = one_error_line(cli(*args, "--patches", team))
        assert line.startswith(f"error: {team / 'series'}: line 5 names '../outside.toml', which leads outside "
                               "the patch folder"), line
    assert (team / "series").read_bytes() == series
    assert outside.read_text(encoding="utf-8") == threshold_patch(patch_id="outside")
    assert cli("test", "--patches", team).exit_code == 0  # not named, it is only a comment
